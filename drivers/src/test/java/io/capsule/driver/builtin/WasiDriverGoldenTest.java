package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
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
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The jsonl driver built the ordinary way — Debian's rustc for wasm32-wasi, wrapped with jco's
 * preview1 reactor adapter (drivers/fixtures/wasi) — loads on both engines with empty WASI grants,
 * shows what it printed in describe as notes, reads an empty environment and a working clock in
 * launch, and replays the jsonl golden transcripts exactly like the import-free built-in.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WasiDriverGoldenTest {

  static final String FIXTURE = "/fixtures/wasi/jsonl-wasi.wasm";

  private final Map<String, DriverLoader> loaders = new HashMap<>();
  private final Map<String, LoadedDriver> loaded = new HashMap<>();

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

  LoadedDriver load(String engine) {
    return loaded.computeIfAbsent(
        engine,
        e ->
            loaders
                .computeIfAbsent(e, n -> DriverLoader.create(n, DriverLoader.Settings.DEFAULTS))
                .loadBytes("jsonl-wasi", fixture(FIXTURE)));
  }

  @AfterAll
  void close() {
    loaders.values().forEach(DriverLoader::close);
  }

  Stream<String> engines() {
    return Engines.NAMES.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void itLoadsAsTheWholeAdapterGraphAndItsDescribeOutputBecomesNotes(String engine) {
    LoadedDriver driver = load(engine);
    DriverBinary binary = driver.binary();
    assertTrue(binary.graph().isPresent(), "a WASI component runs as its core graph");
    assertEquals(4, binary.graph().get().modules().size(), "main, adapter, shim, fixup");
    assertEquals("jsonl", driver.description().harness());
    assertEquals(
        List.of(
            "driver stdout: jsonl-wasi: describing myself",
            "driver stderr: jsonl-wasi: a line on stderr"),
        driver.describeNotes());
  }

  Stream<Arguments> runs() {
    return Engines.NAMES.stream()
        .flatMap(
            engine ->
                Golden.index().stream()
                    .filter(e -> e.driver().equals("jsonl"))
                    .flatMap(
                        entry ->
                            Golden.SPLITS.stream()
                                .map(split -> Arguments.of(engine, entry, split))));
  }

  @ParameterizedTest(name = "{0}: {1} in batches of {2}")
  @MethodSource("runs")
  void theWasiBuildGivesTheJsonlGoldenEventsUnderEveryBatchSplit(
      String engine, Golden.Entry entry, int split) {
    List<Event> events;
    try (ProcessDriver driver = load(engine).newInstance()) {
      // launch fails unless the environment is empty and the wall clock reads after 2020
      assertInstanceOf(LaunchResult.Planned.class, driver.launch(Golden.launchRequest()));
      events = Golden.parse(driver, entry.lines(), split);
    }
    assertEquals(entry.expected(), events, () -> EventJson.toPrettyLines(events));
  }
}
