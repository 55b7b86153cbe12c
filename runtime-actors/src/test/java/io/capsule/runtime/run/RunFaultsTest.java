package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.Event;
import io.capsule.runtime.core.Ending;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RunFaultsTest {

  static Stream<Arguments> faults() {
    Diagnostic unresolved = Diagnostic.of(Code.E_TOOL_001, "no tool 'grep'");
    Diagnostic unbound = Diagnostic.of(Code.E_TOOL_009, "cannot bind");
    return Stream.of(
        row(
            "apply bound",
            RunFaults::notAppliedInTime,
            Ending.HarnessFailed.class,
            Code.E_RUN_007,
            "the launch plan was not applied within 30 s (the disk or the blocking dispatcher is"
                + " stuck)"),
        row(
            "classify-exit not terminal",
            () -> RunFaults.notTerminal(new Event.Text("hi")),
            Ending.DriverFailed.class,
            Code.E_RUN_034,
            "failed in classify-exit: returned text"),
        row(
            "driver stopped",
            RunFaults::driverStopped,
            Ending.DriverFailed.class,
            Code.E_RUN_034,
            "the driver stopped unexpectedly"),
        row(
            "harness actor failed",
            () -> RunFaults.harnessStopped(false),
            Ending.HarnessFailed.class,
            Code.E_RUN_007,
            "the harness actor failed"),
        row(
            "harness abandoned at the kill bound",
            () -> RunFaults.harnessStopped(true),
            Ending.HarnessFailed.class,
            Code.E_RUN_007,
            "the harness did not exit within 30 s of its kill"),
        row(
            "a tool that does not resolve",
            () -> RunFaults.bridgeFailed(unresolved),
            Ending.Blocked.class,
            Code.E_TOOL_001,
            "no tool 'grep'"),
        row(
            "a bridge that cannot bind",
            () -> RunFaults.bridgeFailed(unbound),
            Ending.HarnessFailed.class,
            Code.E_TOOL_009,
            "cannot bind"),
        row(
            "bridge stopped",
            RunFaults::bridgeStopped,
            Ending.HarnessFailed.class,
            Code.E_TOOL_009,
            "the tool bridge stopped unexpectedly"));
  }

  private static Arguments row(
      String name, Supplier<Ending> fault, Class<?> kind, Code code, String message) {
    return Arguments.of(name, fault, kind, code, message);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("faults")
  void eachFaultEndsTheRunWithItsKindCodeAndMessage(
      String name, Supplier<Ending> fault, Class<?> kind, Code code, String message) {
    Ending e = fault.get();
    assertEquals(kind, e.getClass());
    Diagnostic d =
        e instanceof Ending.DriverFailed f
            ? f.diagnostic()
            : e instanceof Ending.HarnessFailed h
                ? h.diagnostic()
                : ((Ending.Blocked) e).diagnostic();
    assertEquals(code, d.code());
    assertEquals(message, d.message());
  }

  @Test
  void aClassifyThatEndsNoTurnNamesTheFunction() {
    Ending.DriverFailed f = (Ending.DriverFailed) RunFaults.notTerminal(new Event.Text("hi"));
    assertEquals(Map.of("function", "classify-exit"), f.diagnostic().details());
  }

  @Test
  void theRunsOwnBoundsAreThirtySecondsAndTheWarningNamesTheKillBound() {
    assertEquals(Duration.ofSeconds(30), RunFaults.APPLY_BOUND);
    assertEquals(Duration.ofSeconds(30), RunFaults.KILL_BOUND);
    assertEquals(
        "the harness did not exit within 30 s of its kill; its process group is killed as soon"
            + " as it can be",
        RunFaults.abandoned());
  }
}
