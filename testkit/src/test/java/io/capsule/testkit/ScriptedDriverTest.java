package io.capsule.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import io.capsule.driver.api.TurnFailure;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Examples: a Java driver for tests, with canned rules and a record of every call. */
class ScriptedDriverTest {

  private final ScriptedDriver driver =
      ScriptedDriver.builder("fake", "/bin/sh")
          .plan(ScriptedDriver.Builder.plan(List.of("/path/to/harness.sh")))
          .testedVersions(List.of("1.0.0"))
          .build();

  @Test
  void eachCanonicalJsonLineIsAnEventAndChatterIsSkipped() {
    List<Event> events =
        driver.parse(
            List.of(
                "{\"type\":\"text-delta\",\"value\":\"he\"}",
                "starting up...",
                "",
                "{\"type\":\"turn-end\",\"value\":\"done\"}"));
    assertEquals(List.of(new Event.TextDelta("he"), new Event.TurnEnd("done")), events);
    assertEquals(4, driver.parsedLines().size());
    assertEquals(1, driver.batches().size());
  }

  @Test
  void aJsonObjectThatIsNotAnEventIsADriverFailure() {
    assertThrows(
        IllegalArgumentException.class,
        () -> driver.parse(List.of("{\"type\":\"no-such-event\"}")));
  }

  @Test
  void launchesAreRecordedAndAnswered() {
    LaunchRequest request =
        new LaunchRequest(
            Optional.empty(),
            "system",
            Optional.empty(),
            Optional.empty(),
            new Session("s-1", SessionMode.NEW),
            Optional.of("1.0.0"),
            "the task");
    LaunchResult result = driver.launch(request);
    LaunchPlan plan = assertInstanceOf(LaunchResult.Planned.class, result).plan();
    assertEquals(List.of("/path/to/harness.sh"), plan.args());
    assertEquals(List.of(request), driver.launches());
    assertEquals(List.of("1.0.0"), driver.describe().testedVersions());
  }

  static Stream<Arguments> exits() {
    return Stream.of(
        Arguments.of(
            "a clean exit ends the turn",
            new ExitStatus(Optional.of(0), Optional.empty(), "", false, false),
            new Event.TurnEnd("")),
        Arguments.of(
            "an interrupted harness is canceled",
            new ExitStatus(Optional.of(0), Optional.empty(), "", true, false),
            new Event.TurnFailed(new TurnFailure(FailureKind.CANCELED, "interrupted"))),
        Arguments.of(
            "a failing code names the last stderr line",
            new ExitStatus(Optional.of(3), Optional.empty(), "a\nboom\n", false, false),
            new Event.TurnFailed(new TurnFailure(FailureKind.HARNESS_ERROR, "exit code 3: boom"))),
        Arguments.of(
            "a signal is named",
            new ExitStatus(Optional.empty(), Optional.of(9), "", false, false),
            new Event.TurnFailed(new TurnFailure(FailureKind.HARNESS_ERROR, "signal 9"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("exits")
  void theDefaultExitRule(String name, ExitStatus exit, Event expected) {
    assertEquals(expected, driver.classifyExit(exit));
    assertEquals(List.of(exit), driver.exits());
  }

  @Test
  void rulesCanBeReplaced() {
    ScriptedDriver custom =
        ScriptedDriver.builder("fake", "fake-bin")
            .parseLine(
                l ->
                    l.startsWith("END ")
                        ? List.of(new Event.TurnEnd(l.substring(4)))
                        : List.of(new Event.TextDelta(l)))
            .launch(r -> new LaunchResult.Refused("no " + r.task()))
            .readLogin(o -> new LoginState.Unknown(o.stderr()))
            .build();
    assertEquals(
        List.of(new Event.TextDelta("a"), new Event.TurnEnd("b")),
        custom.parse(List.of("a", "END b")));
    assertEquals(
        new LoginState.Unknown("?"), custom.readLogin(new LoginOutput(Optional.of(1), "", "?")));
    custom.close();
    assertEquals(true, custom.isClosed());
  }
}
