package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.component.DriverBinary;
import io.capsule.driver.engine.Engines;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The jsonl driver built the ordinary ways — in Rust by Debian's rustc for wasm32-wasi, and in C by
 * clang against wasi-libc, each wrapped with jco's preview1 reactor adapter (drivers/fixtures/wasi)
 * — loads on both engines with empty WASI grants, shows what it printed in describe as notes, reads
 * an empty environment and a working clock in launch, and describes, launches, replays the jsonl
 * golden transcripts and classifies exits exactly like the import-free built-in.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WasiDriverGoldenTest {

  /** A WASI build of the jsonl driver and the notes its describe prints. */
  record Build(String name, List<String> describeNotes) {
    String resource() {
      return "/fixtures/wasi/" + name + ".wasm";
    }

    @Override
    public String toString() {
      return name;
    }
  }

  static final List<Build> BUILDS =
      List.of(
          new Build(
              "jsonl-wasi",
              List.of(
                  "driver stdout: jsonl-wasi: describing myself",
                  "driver stderr: jsonl-wasi: a line on stderr")),
          new Build(
              "jsonl-c",
              List.of(
                  "driver stdout: jsonl-c: describing myself",
                  "driver stderr: jsonl-c: a line on stderr")));

  private final Map<String, DriverLoader> loaders = new HashMap<>();
  private final Map<String, LoadedDriver> loaded = new HashMap<>();
  private final BuiltinDrivers builtins = new BuiltinDrivers();

  static byte[] fixture(String resource) {
    try (InputStream in = WasiDriverGoldenTest.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(resource + " is missing; run build-wasi-fixtures.sh");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  LoadedDriver load(String engine, Build build) {
    return loaded.computeIfAbsent(
        engine + "/" + build.name(),
        k ->
            loaders
                .computeIfAbsent(
                    engine, n -> DriverLoader.create(n, DriverLoader.Settings.DEFAULTS))
                .loadBytes(build.name(), fixture(build.resource())));
  }

  @AfterAll
  void close() {
    loaders.values().forEach(DriverLoader::close);
    builtins.close();
  }

  Stream<Arguments> buildsOnEngines() {
    return Engines.NAMES.stream()
        .flatMap(engine -> BUILDS.stream().map(build -> Arguments.of(engine, build)));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("buildsOnEngines")
  void itLoadsAsTheWholeAdapterGraphAndItsDescribeOutputBecomesNotes(String engine, Build build) {
    LoadedDriver driver = load(engine, build);
    DriverBinary binary = driver.binary();
    assertTrue(binary.graph().isPresent(), "a WASI component runs as its core graph");
    assertEquals(4, binary.graph().get().modules().size(), "main, adapter, shim, fixup");
    assertEquals(builtins.load(engine, "jsonl").description(), driver.description());
    assertEquals(build.describeNotes(), driver.describeNotes());
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("buildsOnEngines")
  void itPlansTheTurnAndClassifiesExitsLikeTheBuiltIn(String engine, Build build) {
    List<ExitStatus> exits =
        List.of(
            new ExitStatus(
                Optional.of(3), Optional.empty(), "warming up\n  boom  \n\n", false, false),
            new ExitStatus(Optional.empty(), Optional.of(9), "", false, false),
            new ExitStatus(Optional.of(130), Optional.empty(), "bye", true, false),
            new ExitStatus(Optional.empty(), Optional.empty(), "", false, true));
    try (ProcessDriver wasi = load(engine, build).newInstance();
        ProcessDriver builtin = builtins.instance(engine, "jsonl")) {
      // launch refuses unless the environment is empty and the wall clock reads after 2020
      LaunchResult expected = builtin.launch(Golden.launchRequest());
      assertEquals(expected, wasi.launch(Golden.launchRequest()));
      for (ExitStatus exit : exits) {
        assertEquals(builtin.classifyExit(exit), wasi.classifyExit(exit), exit::toString);
      }
    }
  }

  /** Lines off the golden path, where a hand-written JSON reader could part from serde_json. */
  static final List<String> EDGE_LINES =
      List.of(
          "not json",
          "[1,2]",
          "{\"type\":\"text\"",
          "{\"type\":\"text\",\"text\":\"a\"} trailing",
          "{\"type\":\"mystery\",\"text\":\"x\"}",
          "{\"type\":\"delta\"}",
          "{\"type\":7}",
          "{\"type\":\"text\",\"text\":\"caf\\u00e9 \\ud83d\\ude00 tab\\t quote\\\" \\/\"}",
          "{\"type\":\"text\",\"text\":\"lone \\ud83d\"}",
          "{\"type\":\"text\",\"text\":\"raw \u0001 control\"}",
          "{\"type\":\"tool_call\",\"id\":\"c\",\"name\":\"n\",\"input\":{ \"a\" : [1, -2, true, null, \"x\\n\\u0002\"], \"b\":{}}}",
          "{\"type\":\"tool_call\",\"id\":\"c\",\"name\":\"n\"}",
          "{\"type\":\"tool_result\",\"id\":\"c\",\"is_error\":\"yes\"}",
          "{\"type\":\"retry\",\"attempt\":99999999999,\"reason\":\"r\"}",
          "{\"type\":\"retry\",\"attempt\":-1}",
          "{\"type\":\"usage\",\"usage\":{\"output\":2.5,\"thinking\":4}}",
          "{\"type\":\"usage\",\"usage\":[]}",
          "{\"type\":\"note\",\"text\":\"" + "é".repeat(600) + "\"}",
          "{\"type\":\"bogus\",\"pad\":\"" + "ü".repeat(600) + "\"}",
          "{\"type\":\"error\",\"kind\":\"max-turns\"}",
          "{\"type\":\"result\",\"text\":\"second terminal\"}",
          "   ",
          "[".repeat(200) + "]".repeat(200));

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("buildsOnEngines")
  void linesOffTheGoldenPathGiveTheBuiltInsEvents(String engine, Build build) {
    try (ProcessDriver wasi = load(engine, build).newInstance();
        ProcessDriver builtin = builtins.instance(engine, "jsonl")) {
      for (String line : EDGE_LINES) {
        assertEquals(builtin.parse(List.of(line)), wasi.parse(List.of(line)), line);
      }
    }
  }

  /**
   * A repeated member: the built-in (and so its Rust WASI build) reads lines into typed structs,
   * which refuse a member given twice (murmur-driver-abi's {@code lenient}, a documented
   * difference); the C build's reader keeps the last, as a JSON value tree did.
   */
  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("buildsOnEngines")
  void aRepeatedMemberIsUnreadableToTheRustBuildsAndTheLastOneToTheC(String engine, Build build) {
    String line = "{\"type\":\"text\",\"text\":\"first\",\"text\":\"last wins\"}";
    try (ProcessDriver wasi = load(engine, build).newInstance();
        ProcessDriver builtin = builtins.instance(engine, "jsonl")) {
      List<Event> unreadable = List.of(new Event.Note("unreadable jsonl line: " + line));
      assertEquals(unreadable, builtin.parse(List.of(line)));
      List<Event> expected =
          build.name().equals("jsonl-c") ? List.of(new Event.Text("last wins")) : unreadable;
      assertEquals(expected, wasi.parse(List.of(line)));
    }
  }

  Stream<Arguments> runs() {
    return Engines.NAMES.stream()
        .flatMap(
            engine ->
                BUILDS.stream()
                    .flatMap(
                        build ->
                            Golden.index().stream()
                                .filter(e -> e.driver().equals("jsonl"))
                                .flatMap(
                                    entry ->
                                        Golden.SPLITS.stream()
                                            .map(
                                                split ->
                                                    Arguments.of(engine, build, entry, split)))));
  }

  @ParameterizedTest(name = "{0}: {1}: {2} in batches of {3}")
  @MethodSource("runs")
  void theWasiBuildGivesTheJsonlGoldenEventsUnderEveryBatchSplit(
      String engine, Build build, Golden.Entry entry, int split) {
    List<Event> events;
    try (ProcessDriver driver = load(engine, build).newInstance()) {
      assertTrue(driver.launch(Golden.launchRequest()) instanceof LaunchResult.Planned);
      events = Golden.parse(driver, entry.lines(), split);
    }
    assertEquals(entry.expected(), events, () -> EventJson.toPrettyLines(events));
  }
}
