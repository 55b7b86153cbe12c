package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.FailureKind;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.javadsl.RunOutcome;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The report's status and failure_type for every way a run ends (docs/runner-protocol.md). */
class OutcomesTest {

  static Stream<Arguments> endings() {
    return Stream.of(
        Arguments.of(new Ending.Completed("r"), "done", "", ""),
        Arguments.of(
            new Ending.TurnFailed(Code.E_RUN_033, FailureKind.QUOTA, "q"),
            "failed",
            "E-RUN-033",
            "E-RUN-033:quota"),
        Arguments.of(
            new Ending.TurnFailed(Code.E_RUN_036, FailureKind.HARNESS_ERROR, "gone"),
            "failed",
            "E-RUN-036",
            "E-RUN-036:harness-error"),
        Arguments.of(new Ending.MaxTurns(5), "failed", "E-RUN-033", "E-RUN-033:max-turns"),
        Arguments.of(
            new Ending.SpendCeiling(120, 100), "failed", "E-RUN-040", "E-RUN-040:spend-ceiling"),
        Arguments.of(new Ending.Inactive(600_000), "failed", "E-RUN-035", "E-RUN-035"),
        Arguments.of(new Ending.Canceled("stop"), "failed", "E-RUN-040", "canceled"),
        Arguments.of(
            new Ending.DriverFailed(Diagnostic.of(Code.E_RUN_034, "failed in parse: trap")),
            "failed",
            "E-RUN-034",
            "E-RUN-034"),
        Arguments.of(
            new Ending.HarnessFailed(Diagnostic.of(Code.E_RUN_007, "spawn failed")),
            "failed",
            "E-RUN-007",
            "E-RUN-007"),
        Arguments.of(
            new Ending.Blocked(Diagnostic.of(Code.E_CAP_019, "missing env")),
            "blocked",
            "E-CAP-019",
            "E-CAP-019"));
  }

  @ParameterizedTest(name = "[{index}] {0} -> {1} {3}")
  @MethodSource("endings")
  void fillsTheReportFromHowTheRunEnded(
      Ending ending, String status, String code, String failureType) {
    RunOutcome o =
        Outcomes.of("t", ending, 1, UsageSplit.ZERO, Optional.empty(), Duration.ofMillis(5));
    assertEquals(status, o.status().wire());
    assertEquals(code, o.code().orElse(""));
    assertEquals(failureType, o.failureType().orElse(""));
    assertEquals(ending instanceof Ending.Canceled, o.canceled());
    assertEquals(ending instanceof Ending.Completed, o.result().isPresent());
  }
}
