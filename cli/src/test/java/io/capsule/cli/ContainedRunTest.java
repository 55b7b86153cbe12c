package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code capsule run} of the hello capsule under each containment (README "Containment"): the
 * default contains it where bubblewrap works (this machine kind and CI have it), {@code auto}
 * without it warns on the run, {@code required} without it refuses.
 */
class ContainedRunTest {

  private static Cli.Result hello() {
    return Cli.run("run", Cli.HELLO.toString(), "--task", "hi", "--json");
  }

  /** Runs with containment {@code mode} and a bwrap binary that is not there. */
  private static Cli.Result withoutBwrap(String mode, Supplier<Cli.Result> run) {
    System.setProperty("capsule.harness.containment", mode);
    System.setProperty("capsule.harness.bwrap", "/nonexistent/bwrap");
    ConfigFactory.invalidateCaches();
    try {
      return run.get();
    } finally {
      System.clearProperty("capsule.harness.containment");
      System.clearProperty("capsule.harness.bwrap");
      ConfigFactory.invalidateCaches();
    }
  }

  @Test
  void theDefaultRunsTheHarnessContainedWithoutAWarning() {
    Cli.Result r = hello();
    assertEquals(0, r.exit(), r.out() + r.err());
    assertFalse(r.out().contains("W-CAP-050"), r.out());
    assertTrue(r.out().contains("\"event\":\"finished\""), r.out());
  }

  /**
   * A capsule under {@code /tmp} (hidden inside the sandbox) whose harness is {@code /bin/sh} with
   * the script beside the manifest as its argument: only the capsule folder's read-only bind lets
   * the shell read it (the binary's installation is {@code /bin}).
   */
  @Test
  void aScriptBesideTheManifestRunsContainedFromAHiddenFolder(@TempDir Path tmp)
      throws IOException {
    Path capsule = Files.createDirectories(tmp.resolve("scripted"));
    Path script = Files.createDirectories(capsule.resolve("harness")).resolve("hello.sh");
    Files.copy(Cli.HELLO.resolve("harness/hello.sh"), script);
    String manifest =
        Files.readString(Cli.HELLO.resolve("murmur.yaml"))
            .replace("name: hello", "name: scripted")
            .replace(
                "    config: {}\n  command: ./harness/hello.sh",
                "    config: { binary_args: [\"" + script + "\"] }\n  command: /bin/sh");
    assertTrue(manifest.contains("command: /bin/sh"), manifest);
    Files.writeString(capsule.resolve("murmur.yaml"), manifest);

    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "hi", "--json");
    assertEquals(0, r.exit(), manifest + r.out() + r.err());
    assertTrue(r.out().contains("\"status\":\"done\""), r.out());
    assertFalse(r.out().contains("W-CAP-050"), "contained: " + r.out());
  }

  @Test
  void autoWithoutBubblewrapRunsAndSaysSoInTheEventsAndTheTrace(@TempDir Path runs)
      throws IOException {
    Cli.Result r =
        withoutBwrap(
            "auto",
            () ->
                Cli.run(
                    "run",
                    Cli.HELLO.toString(),
                    "--task",
                    "hi",
                    "--json",
                    "--trace-dir",
                    runs.toString()));
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("\"code\":\"W-CAP-050\""), r.out());
    assertTrue(r.out().contains("/nonexistent/bwrap"), r.out());
    String trace;
    try (var files = Files.walk(runs)) {
      trace =
          Files.readString(
              files
                  .filter(f -> f.getFileName().toString().equals("trace.jsonl"))
                  .findFirst()
                  .get());
    }
    assertTrue(trace.contains("\"event_type\":\"harness_containment\""), trace);
    assertTrue(trace.contains("\"contained\":false"), trace);
    assertTrue(trace.contains("\"code\":\"W-CAP-050\""), trace);
  }

  @Test
  void autoWithoutBubblewrapPrintsTheWarningLineInTheLiveView() {
    Cli.Result r = withoutBwrap("auto", () -> Cli.run("run", Cli.HELLO.toString(), "--task", "hi"));
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue((r.out() + r.err()).contains("W-CAP-050"), r.out() + r.err());
  }

  @Test
  void requiredWithoutBubblewrapRefusesToStartTheHarness() {
    Cli.Result r = withoutBwrap("required", ContainedRunTest::hello);
    assertNotEquals(0, r.exit(), r.out() + r.err());
    assertTrue((r.out() + r.err()).contains("E-CAP-051"), r.out() + r.err());
  }
}
