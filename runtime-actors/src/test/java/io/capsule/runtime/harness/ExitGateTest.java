package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** When a harness's exit may be reported: a table of what happened, and what the gate says. */
class ExitGateTest {

  /**
   * Steps, applied in order: x exited, e stderr ended, w a stdin write started, W it settled, s a
   * signal started, S it settled, k a kill started, K it finished, g the exited leader's group was
   * found empty (no kill needed), d the drain bound ran out.
   */
  static Stream<Arguments> table() {
    return Stream.of(
        Arguments.of("", ExitGate.Next.WAIT),
        Arguments.of("e", ExitGate.Next.WAIT),
        Arguments.of("x", ExitGate.Next.WAIT),
        Arguments.of("xe", ExitGate.Next.KILL_GROUP),
        Arguments.of("ex", ExitGate.Next.KILL_GROUP),
        Arguments.of("xek", ExitGate.Next.WAIT),
        Arguments.of("xekK", ExitGate.Next.REPORT),
        Arguments.of("kKxe", ExitGate.Next.REPORT),
        Arguments.of("xeg", ExitGate.Next.REPORT),
        Arguments.of("wxeg", ExitGate.Next.WAIT),
        Arguments.of("wxegW", ExitGate.Next.REPORT),
        Arguments.of("wxekK", ExitGate.Next.WAIT),
        Arguments.of("wxekKW", ExitGate.Next.REPORT),
        Arguments.of("sxekK", ExitGate.Next.WAIT),
        Arguments.of("sxekKS", ExitGate.Next.REPORT),
        Arguments.of("xkK", ExitGate.Next.WAIT),
        Arguments.of("xkKd", ExitGate.Next.REPORT),
        Arguments.of("wxd", ExitGate.Next.KILL_GROUP),
        Arguments.of("xdk", ExitGate.Next.WAIT),
        Arguments.of("d", ExitGate.Next.WAIT));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("table")
  void reportsOnlyWhenTheExitIsKnownEverythingSettledAndTheGroupIsKilled(
      String steps, ExitGate.Next next) {
    ExitGate gate = new ExitGate();
    for (char c : steps.toCharArray()) {
      switch (c) {
        case 'x' -> gate.onExited(0);
        case 'e' -> gate.onStderrDone();
        case 'w' -> gate.stdinWriteStarted();
        case 'W' -> gate.stdinWriteSettled();
        case 's' -> gate.signalStarted();
        case 'S' -> gate.signalSettled();
        case 'k' -> gate.killStarted();
        case 'K' -> gate.killDone();
        case 'g' -> gate.groupFoundGone();
        case 'd' -> gate.onDrainElapsed();
        default -> throw new IllegalArgumentException("step " + c);
      }
    }
    assertEquals(next, gate.next());
  }

  @Test
  void theExitIsReportedOnceWithItsValue() {
    ExitGate gate = new ExitGate();
    gate.onStderrDone();
    gate.onExited(137);
    gate.killStarted();
    gate.killDone();

    assertEquals(137, gate.report());
    assertTrue(gate.reported());
    assertEquals(ExitGate.Next.WAIT, gate.next(), "never twice");
  }

  @Test
  void anExitWithSomethingStillOpenAsksForTheDrainBound() {
    assertTrue(new ExitGate().onExited(0), "stderr still open");
    ExitGate drained = new ExitGate();
    drained.onStderrDone();
    assertFalse(drained.onExited(0), "nothing open");
  }
}
