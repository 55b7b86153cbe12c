package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code describe}, {@code classify-exit} and {@code read-login} of each built-in driver, through
 * the real components on both engines, as spec tables.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BuiltinDriverExitAndLoginTest {

  /** The built-ins, loaded once per engine for this class and closed after it. */
  @RegisterExtension static final BuiltinDrivers drivers = new BuiltinDrivers();

  private static ExitStatus exited(int code, String stderr) {
    return new ExitStatus(Optional.of(code), Optional.empty(), stderr, false, false);
  }

  private static ExitStatus interrupted(int code) {
    return new ExitStatus(Optional.of(code), Optional.empty(), "", true, false);
  }

  private static ExitStatus signalled(int signal) {
    return new ExitStatus(Optional.empty(), Optional.of(signal), "", false, false);
  }

  private static Stream<Arguments> onEveryEngine(Stream<Arguments> rows) {
    List<Arguments> table = rows.toList();
    return BuiltinDrivers.engines().stream()
        .flatMap(
            e ->
                table.stream()
                    .map(
                        row -> {
                          Object[] values = row.get();
                          Object[] withEngine = new Object[values.length + 1];
                          withEngine[0] = e;
                          System.arraycopy(values, 0, withEngine, 1, values.length);
                          return Arguments.of(withEngine);
                        }));
  }

  Stream<Arguments> exits() {
    Stream<Arguments> rows =
        Stream.of(
            // Interrupted by the runtime: canceled, whatever the exit code says.
            Arguments.of("claude-code", interrupted(0), FailureKind.CANCELED),
            Arguments.of("codex", interrupted(1), FailureKind.CANCELED),
            Arguments.of("gemini", interrupted(145), FailureKind.CANCELED),
            Arguments.of("jsonl", interrupted(0), FailureKind.CANCELED),
            Arguments.of(
                "claude-code", exited(1, "Invalid API key · Please run /login"), FailureKind.AUTH),
            Arguments.of("claude-code", exited(1, "boom\n"), FailureKind.HARNESS_ERROR),
            Arguments.of("claude-code", exited(0, ""), FailureKind.HARNESS_ERROR),
            Arguments.of("codex", exited(1, ""), FailureKind.HARNESS_ERROR),
            Arguments.of("gemini", exited(145, ""), FailureKind.AUTH),
            Arguments.of("gemini", exited(41, ""), FailureKind.AUTH),
            Arguments.of("gemini", exited(173, ""), FailureKind.QUOTA),
            Arguments.of("gemini", exited(53, ""), FailureKind.MAX_TURNS),
            Arguments.of("gemini", exited(55, ""), FailureKind.HARNESS_ERROR),
            Arguments.of("gemini", exited(1, ""), FailureKind.HARNESS_ERROR),
            Arguments.of("jsonl", exited(3, "last words"), FailureKind.HARNESS_ERROR),
            Arguments.of("claude-code", signalled(9), FailureKind.OTHER),
            Arguments.of("codex", signalled(9), FailureKind.OTHER),
            Arguments.of("gemini", signalled(9), FailureKind.OTHER),
            Arguments.of("jsonl", signalled(15), FailureKind.OTHER));
    return onEveryEngine(rows);
  }

  @ParameterizedTest(name = "{0}: {1} {2} -> {3}")
  @MethodSource("exits")
  void classifyExitGivesTheFailureKindTheDriverDocuments(
      String engine, String driver, ExitStatus exit, FailureKind kind) {
    Event event;
    try (ProcessDriver d = drivers.instance(engine, driver)) {
      event = d.classifyExit(exit);
    }
    Event.TurnFailed failed = assertInstanceOf(Event.TurnFailed.class, event);
    assertEquals(kind, failed.failure().kind());
    assertTrue(!failed.failure().message().isBlank());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void codexClassifiesAnExitByItsLastFatalError(String engine) {
    try (ProcessDriver d = drivers.instance(engine, "codex")) {
      d.parse(
          List.of("{\"type\":\"error\",\"message\":\"unexpected status 429 Too Many Requests\"}"));
      Event.TurnFailed failed =
          assertInstanceOf(Event.TurnFailed.class, d.classifyExit(exited(1, "")));
      assertEquals(FailureKind.QUOTA, failed.failure().kind());
    }
  }

  Stream<String> engines() {
    return BuiltinDrivers.engines().stream();
  }

  private static LoginOutput out(Integer code, String stdout, String stderr) {
    return new LoginOutput(Optional.ofNullable(code), stdout, stderr);
  }

  Stream<Arguments> logins() {
    Stream<Arguments> rows =
        Stream.of(
            Arguments.of(
                "claude-code",
                out(0, "{\n  \"loggedIn\": true,\n  \"authMethod\": \"claude.ai\"\n}\n", ""),
                LoginState.LoggedIn.class),
            Arguments.of(
                "claude-code",
                out(1, "{\n  \"loggedIn\": false\n}\n", ""),
                LoginState.LoggedOut.class),
            Arguments.of("claude-code", out(1, "", ""), LoginState.LoggedOut.class),
            Arguments.of("claude-code", out(0, "garbage", ""), LoginState.Unknown.class),
            Arguments.of("claude-code", out(null, "", ""), LoginState.Unknown.class),
            Arguments.of("codex", out(1, "", "Not logged in\n"), LoginState.LoggedOut.class),
            Arguments.of(
                "codex", out(0, "Logged in using ChatGPT\n", ""), LoginState.LoggedIn.class),
            Arguments.of("codex", out(2, "sk-secret", ""), LoginState.Unknown.class),
            Arguments.of("gemini", out(0, "", ""), LoginState.Unknown.class),
            Arguments.of("jsonl", out(0, "", ""), LoginState.Unknown.class));
    return onEveryEngine(rows);
  }

  @ParameterizedTest(name = "{0}: {1} {2} -> {3}")
  @MethodSource("logins")
  void readLoginReadsWhatTheLoginCommandPrintedWithoutEchoingIt(
      String engine, String driver, LoginOutput output, Class<? extends LoginState> expected) {
    LoginState state;
    try (ProcessDriver d = drivers.instance(engine, driver)) {
      state = d.readLogin(output);
    }
    assertInstanceOf(expected, state);
    String reason =
        state instanceof LoginState.LoggedOut o
            ? o.reason()
            : state instanceof LoginState.Unknown u ? u.reason() : "";
    assertTrue(!reason.contains("secret") && !reason.contains("claude.ai"), reason);
    if (state instanceof LoginState.LoggedOut o) {
      assertTrue(o.reason().contains("login"), "names how to sign in: " + o.reason());
    }
  }

  Stream<Arguments> descriptions() {
    Stream<Arguments> rows =
        Stream.of(
            Arguments.of(
                "claude-code",
                "claude",
                InterruptMethod.STDIN_MESSAGE,
                new LoginCheck.Command(List.of("auth", "status", "--json")),
                "2.1.328"),
            Arguments.of(
                "codex",
                "codex",
                InterruptMethod.SIGNAL_INT,
                new LoginCheck.Command(List.of("login", "status")),
                "0.169.0"),
            Arguments.of("gemini", "gemini", InterruptMethod.SIGNAL_INT, null, "0.61.0"),
            Arguments.of("jsonl", "capsule-agent", InterruptMethod.SIGNAL_INT, null, "1"));
    return onEveryEngine(rows);
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("descriptions")
  void eachBuiltinDescribesItsHarnessAndLoadsWithNoGrants(
      String engine,
      String driver,
      String binary,
      InterruptMethod interrupt,
      LoginCheck login,
      String tested) {
    Description d = drivers.load(engine, driver).description();
    assertEquals(binary, d.binary());
    assertEquals(interrupt, d.interrupt());
    assertTrue(d.testedVersions().contains(tested), d.testedVersions()::toString);
    assertTrue(d.reportsUsage());
    if (login == null) {
      assertInstanceOf(LoginCheck.Unavailable.class, d.loginCheck());
    } else {
      assertEquals(login, d.loginCheck());
    }
    if (!driver.equals("jsonl")) {
      assertEquals(List.of("HOME", "PATH"), d.requiredEnv());
    }
  }
}
