package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code examples/hello} end to end with its driver switched to the jsonl driver built the ordinary
 * way for WASI (drivers/fixtures/wasi): a copy of the example in a temporary directory, the
 * artifact pointing at the WASI component by path and sha256. The shipped example is unchanged.
 */
class WasiHelloRunTest {

  @TempDir Path tmp;

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"wasmtime", "chicory"})
  void helloRunsThroughTheWasiBuildOfItsDriver(String engine) throws IOException {
    Path capsule = wasiHello();

    // `capsule run` takes the engine from the settings; a system property overrides them
    System.setProperty("capsule.driver.engine", engine);
    com.typesafe.config.ConfigFactory.invalidateCaches();
    Cli.Result r;
    try {
      r = Cli.run("run", capsule.toString(), "--task", "Say hello");
    } finally {
      System.clearProperty("capsule.driver.engine");
      com.typesafe.config.ConfigFactory.invalidateCaches();
    }
    assertEquals(0, r.exit(), r.err() + r.out());
    assertTrue(r.out().contains("Hello! You asked: Say hello\n"), r.out());
    assertTrue(r.out().contains("✓ done in "), r.out());
  }

  /** What the WASI driver printed while describing itself reaches the run's events as notes. */
  @org.junit.jupiter.api.Test
  void theDriversDescribeOutputIsInTheRunsEventsAsNotes() throws IOException {
    Path capsule = wasiHello();
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "Say hello", "--json");
    assertEquals(0, r.exit(), r.err() + r.out());
    List<String> notes = r.out().lines().filter(l -> l.contains("\"kind\":\"note\"")).toList();
    assertTrue(
        notes.stream().anyMatch(l -> l.contains("driver stdout: jsonl-wasi: describing myself")),
        r.out());
    assertTrue(
        notes.stream().anyMatch(l -> l.contains("driver stderr: jsonl-wasi: a line on stderr")),
        r.out());
  }

  /** The property above really reaches the run: an unknown engine makes it fail. */
  @org.junit.jupiter.api.Test
  void theEngineSettingTheTestUsesReachesTheRun() {
    System.setProperty("capsule.driver.engine", "no-such-engine");
    com.typesafe.config.ConfigFactory.invalidateCaches();
    Cli.Result r;
    try {
      r = Cli.run("run", Cli.HELLO.toString(), "--task", "Say hello");
    } finally {
      System.clearProperty("capsule.driver.engine");
      com.typesafe.config.ConfigFactory.invalidateCaches();
    }
    assertTrue(r.exit() != 0, r.out());
    assertTrue((r.err() + r.out()).contains("no-such-engine"), r.err() + r.out());
  }

  /** A copy of examples/hello whose artifact is the WASI build of the jsonl driver. */
  private Path wasiHello() throws IOException {
    Path capsule = tmp.resolve("hello-wasi");
    copy(Cli.HELLO, capsule);
    Path wasm = Cli.ROOT.resolve("drivers/src/test/resources/fixtures/wasi/jsonl-wasi.wasm");
    Files.createDirectories(capsule.resolve("drivers"));
    Files.copy(wasm, capsule.resolve("drivers/jsonl-wasi.wasm"));
    String sha = io.capsule.driver.engine.Sha256.hex(Files.readAllBytes(wasm));
    Path manifest = capsule.resolve("murmur.yaml");
    String yaml = Files.readString(manifest);
    String switched =
        yaml.replace(
            "    builtin: jsonl\n", "    path: drivers/jsonl-wasi.wasm\n    sha256: " + sha + "\n");
    assertTrue(!switched.equals(yaml), "the example's artifact is the built-in jsonl driver");
    Files.writeString(manifest, switched);
    return capsule;
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path p : files.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
  }
}
