package io.capsule.driver.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.TurnFailure;
import io.capsule.driver.engine.Fixtures;
import io.capsule.driver.load.Descriptions;
import io.capsule.driver.load.DriverLoader;
import java.time.Duration;
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
 * The conformance suite: every fixture driver on both engines. A well-behaved fixture gives the
 * same results on both; a hostile one fails at the same stage with the same code and kind on both,
 * and the runtime stays healthy (a fresh instance of the minimal driver works right after).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConformanceTest {

  /** 4 MiB and 500 ms keep the memory bomb and the endless loops quick; the rules are the same. */
  private static final DriverLoader.Settings SETTINGS =
      new DriverLoader.Settings(4L << 20, Duration.ofMillis(500));

  private final Map<String, DriverLoader> loaders =
      Map.of(
          "wasmtime", DriverLoader.create("wasmtime", SETTINGS),
          "chicory", DriverLoader.create("chicory", SETTINGS));

  @AfterAll
  void close() {
    loaders.values().forEach(DriverLoader::close);
  }

  /** fixture, stage it fails at ("none" when it does not), code, kind (trap/abi/refusal). */
  static Stream<Arguments> fixtures() {
    return Stream.of(
        Arguments.of("minimal", "none", null, "none"),
        Arguments.of("minimal.component", "none", null, "none"),
        Arguments.of("wrong-version", "load", Code.E_RUN_029, "refusal"),
        Arguments.of("wrong-version.component", "load", Code.E_RUN_029, "refusal"),
        Arguments.of("not-a-driver", "load", Code.E_RUN_029, "refusal"),
        Arguments.of("wasi-import", "load", Code.E_RUN_032, "refusal"),
        Arguments.of("start-loop", "load", Code.E_RUN_032, "refusal"),
        Arguments.of("describe-trap", "load", Code.E_RUN_032, "refusal"),
        Arguments.of("describe-loop", "load", Code.E_RUN_032, "refusal"),
        Arguments.of("describe-empty-binary", "load", Code.E_RUN_032, "refusal"),
        Arguments.of("describe-eq-env", "load", Code.E_RUN_032, "refusal"),
        Arguments.of("describe-empty-login", "load", Code.E_RUN_032, "refusal"),
        Arguments.of("launch-trap", "launch", Code.E_RUN_034, "trap"),
        Arguments.of("parse-trap", "parse", Code.E_RUN_034, "trap"),
        Arguments.of("parse-loop", "parse", Code.E_RUN_034, "trap"),
        Arguments.of("parse-membomb", "parse", Code.E_RUN_034, "trap"),
        Arguments.of("parse-recursion", "parse", Code.E_RUN_034, "trap"),
        Arguments.of("parse-oob-pointer", "parse", Code.E_RUN_034, "abi"),
        Arguments.of("parse-bad-utf8", "parse", Code.E_RUN_034, "abi"),
        Arguments.of("parse-bad-discriminant", "parse", Code.E_RUN_034, "abi"),
        Arguments.of("parse-huge-list", "parse", Code.E_RUN_034, "abi"),
        Arguments.of("classify-trap", "classify-exit", Code.E_RUN_034, "trap"),
        Arguments.of("classify-nonterminal", "classify-exit", Code.E_RUN_034, "refusal"),
        Arguments.of("login-trap", "read-login", Code.E_RUN_034, "trap"));
  }

  static Stream<Arguments> engineByFixture() {
    return Stream.of("wasmtime", "chicory")
        .flatMap(
            engine ->
                fixtures()
                    .map(
                        a -> {
                          Object[] row = a.get();
                          return Arguments.of(engine, row[0], row[1], row[2], row[3]);
                        }));
  }

  @ParameterizedTest(name = "{0}: {1} -> {2} {3}")
  @MethodSource("engineByFixture")
  void eachFixtureEndsAsSpecifiedAndTheRuntimeStaysHealthy(
      String engine, String fixture, String stage, Code code, String kind) {
    DriverLoader loader = loaders.get(engine);
    Scenario.Outcome outcome = Scenario.run(loader, fixture, Fixtures.bytes(fixture));
    assertEquals(stage, outcome.stage(), String.valueOf(outcome));
    assertEquals(code, outcome.code());
    assertEquals(kind, outcome.kind());
    if (!outcome.failed()) {
      assertEquals(expectedResults(), outcome.results());
    }
    try (ProcessDriver healthy =
        loader.loadBytes("minimal", Fixtures.bytes("minimal")).newInstance()) {
      assertEquals(List.of(new Event.Text("still here")), healthy.parse(List.of("still here")));
    }
    assertFalse(Thread.currentThread().isInterrupted());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fixtures")
  void bothEnginesAgreeOnEveryFixture(String fixture, String stage, Code code, String kind) {
    Scenario.Outcome wasmtime =
        Scenario.run(loaders.get("wasmtime"), fixture, Fixtures.bytes(fixture));
    Scenario.Outcome chicory =
        Scenario.run(loaders.get("chicory"), fixture, Fixtures.bytes(fixture));
    assertEquals(wasmtime, chicory);
    if (code == null) {
      assertNull(wasmtime.code());
    }
  }

  /** What the minimal fixture answers to {@link Scenario#run}, per its WAT source. */
  private static List<Object> expectedResults() {
    return List.of(
        Descriptions.minimal(),
        new LaunchResult.Planned(
            new LaunchPlan(
                List.of("--print", "say hi"),
                List.of(new EnvVar("FAKE_MODE", "test")),
                List.of(new DriverFile("settings.json", "{}")),
                Optional.empty(),
                false,
                Optional.empty())),
        List.of(
            new Event.Text("hello"),
            new Event.TurnEnd("done"),
            new Event.Text("ünïcode ✓"),
            new Event.Text("")),
        List.of(),
        new Event.TurnEnd("done"),
        new Event.TurnFailed(new TurnFailure(FailureKind.HARNESS_ERROR, "boom")),
        new Event.TurnFailed(new TurnFailure(FailureKind.CANCELED, "interrupted")),
        new LoginState.LoggedIn(),
        new LoginState.LoggedOut("run fake login"));
  }
}
