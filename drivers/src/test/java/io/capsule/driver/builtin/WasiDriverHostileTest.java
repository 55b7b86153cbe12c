package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.engine.Engines;
import io.capsule.driver.engine.Fixtures;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.wasi.OutputCapture;
import io.capsule.driver.wasm.DriverException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile WASI drivers on both engines: each is refused at load or contained in its call with its
 * code and reason, and afterwards the same loader (same engine, same compiled modules) runs the
 * ordinary WASI driver through the jsonl golden transcript.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WasiDriverHostileTest {

  private final Map<String, DriverLoader> loaders = new HashMap<>();

  DriverLoader loader(String engine) {
    return loaders.computeIfAbsent(
        engine, e -> DriverLoader.create(e, DriverLoader.Settings.DEFAULTS));
  }

  ProcessDriver instance(String engine, String wasiFixture) {
    return loader(engine)
        .loadBytes(
            wasiFixture, WasiDriverGoldenTest.fixture("/fixtures/wasi/" + wasiFixture + ".wasm"))
        .newInstance();
  }

  Stream<String> engines() {
    return Engines.NAMES.stream();
  }

  /** The next run is healthy: the ordinary WASI driver replays a golden transcript. */
  private String engineUnderTest;

  @AfterEach
  void theNextRunIsHealthy() {
    if (engineUnderTest == null) {
      return;
    }
    Golden.Entry happy =
        Golden.index().stream()
            .filter(e -> e.driver().equals("jsonl") && e.name().equals("happy"))
            .findFirst()
            .orElseThrow();
    try (ProcessDriver driver = instance(engineUnderTest, "jsonl-wasi")) {
      assertInstanceOf(LaunchResult.Planned.class, driver.launch(Golden.launchRequest()));
      assertEquals(happy.expected(), Golden.parse(driver, happy.lines(), 7));
    }
    engineUnderTest = null;
  }

  @AfterAll
  void close() {
    loaders.values().forEach(DriverLoader::close);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void exitEndsTheCallAsATrapNamingTheStatus(String engine) {
    engineUnderTest = engine;
    try (ProcessDriver driver = instance(engine, "hostile-exit")) {
      DriverException e =
          assertThrows(DriverException.class, () -> driver.launch(Golden.launchRequest()));
      assertEquals(Code.E_RUN_034, e.code());
      assertTrue(e.getMessage().contains("driver failed in launch"), e.getMessage());
      assertTrue(e.getMessage().contains("wasi:cli/exit#exit with status err"), e.getMessage());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void noFileCanBeOpenedWithoutPreopens(String engine) {
    engineUnderTest = engine;
    try (ProcessDriver driver = instance(engine, "hostile-open-file")) {
      LaunchResult.Refused refused =
          assertInstanceOf(LaunchResult.Refused.class, driver.launch(Golden.launchRequest()));
      assertTrue(
          refused.message().startsWith("jsonl-wasi: cannot open /etc/passwd"), refused.message());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void a100MiBFloodOnStdoutIsCappedIntoNotes(String engine) {
    engineUnderTest = engine;
    try (ProcessDriver driver = instance(engine, "hostile-flood")) {
      assertInstanceOf(LaunchResult.Planned.class, driver.launch(Golden.launchRequest()));
      List<Event> events = driver.parse(List.of());
      assertEquals(2, events.size(), "the kept bytes and the count of the dropped ones");
      String kept = ((Event.Note) events.get(0)).text();
      assertEquals("driver stdout: ".length() + OutputCapture.CAP_BYTES, kept.length());
      String dropped = ((Event.Note) events.get(1)).text();
      assertTrue(
          dropped.contains((100L * 1024 * 1024 - OutputCapture.CAP_BYTES) + " more bytes dropped"),
          dropped);
      assertEquals(List.of(), driver.parse(List.of()), "drained once");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void aDriverSpinningOnTheWasiClockIsEndedByTheCallDeadline(String engine) {
    engineUnderTest = engine;
    try (DriverLoader shortDeadline =
            DriverLoader.create(
                engine, new DriverLoader.Settings(64L << 20, java.time.Duration.ofSeconds(2)));
        ProcessDriver driver =
            shortDeadline
                .loadBytes(
                    "hostile-loop",
                    WasiDriverGoldenTest.fixture("/fixtures/wasi/hostile-loop.wasm"))
                .newInstance()) {
      long started = System.nanoTime();
      DriverException e =
          assertThrows(DriverException.class, () -> driver.launch(Golden.launchRequest()));
      long tookMs = (System.nanoTime() - started) / 1_000_000;
      assertEquals(Code.E_RUN_034, e.code());
      assertTrue(e.getMessage().contains("driver failed in launch"), e.getMessage());
      assertTrue(tookMs < 20_000, "ended by the 2 s deadline, not later: " + tookMs + " ms");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void aHandleDroppedTwiceIsATrap(String engine) {
    engineUnderTest = engine;
    try (ProcessDriver driver =
        loader(engine)
            .loadBytes("double-drop", Fixtures.bytes("double-drop.component"))
            .newInstance()) {
      DriverException e =
          assertThrows(DriverException.class, () -> driver.launch(Golden.launchRequest()));
      assertEquals(Code.E_RUN_034, e.code());
      assertTrue(e.getMessage().contains("dropped WASI handle"), e.getMessage());
      assertTrue(e.getMessage().contains("no such handle is live"), e.getMessage());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void socketsAndOtherHostFunctionsAreRefusedAtLoadNamingTheImport(String engine) {
    engineUnderTest = engine;
    for (String[] c :
        List.of(
            new String[] {"import-sockets.component", "wasi:sockets/instance-network@0.2.3"},
            new String[] {"import-acme.component", "acme:host/fn"})) {
      DriverException e =
          assertThrows(
              DriverException.class, () -> loader(engine).loadBytes(c[0], Fixtures.bytes(c[0])));
      assertEquals(Code.E_RUN_032, e.code());
      assertTrue(e.getMessage().contains("the driver imports " + c[1] + ";"), e.getMessage());
    }
  }
}
