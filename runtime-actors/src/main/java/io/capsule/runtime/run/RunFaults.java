package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.Event;
import io.capsule.runtime.core.Ending;
import java.time.Duration;

/**
 * The endings a run names itself when one of its children or one of its own bounds fails it (the
 * plan not applied in time, a driver that stops or classifies an exit as no terminal event, a
 * harness actor that fails or does not exit after its kill, a bridge that fails or stops), with the
 * two bounds the run owns beside its configured ones. Pure: each ending is a code and a message;
 * the run decides when.
 */
final class RunFaults {

  private RunFaults() {}

  /**
   * Bound on applying the launch plan: a few small files written into a fresh private folder take
   * milliseconds, so 30 s (a driver call's deadline) means the disk or the blocking pool is stuck,
   * not slow. The run then fails {@code E-RUN-007} instead of waiting forever.
   */
  static final Duration APPLY_BOUND = Duration.ofSeconds(30);

  /**
   * Bound on the harness's exit after the run killed it: SIGKILL and the group's wait take
   * milliseconds ({@code ProcessGroup} waits at most 2 s), so 30 s means the spawn never came back
   * (a stuck dispatcher) or a member is stuck in the kernel. The harness's actor is then stopped
   * (its stop kills the group once it can) and the run reports without the exit, warning {@code
   * W-RUN-046}.
   */
  static final Duration KILL_BOUND = Duration.ofSeconds(30);

  /** {@link #APPLY_BOUND} passed before the plan came back. */
  static Ending notAppliedInTime() {
    return new Ending.HarnessFailed(
        Diagnostic.of(
            Code.E_RUN_007,
            "the launch plan was not applied within "
                + APPLY_BOUND.toSeconds()
                + " s (the disk or the blocking dispatcher is stuck)"));
  }

  /** The driver's {@code classify-exit} answered with an event that ends no turn. */
  static Ending notTerminal(Event classified) {
    return new Ending.DriverFailed(
        Diagnostic.of(Code.E_RUN_034, "failed in classify-exit: returned " + classified.witName())
            .with("function", "classify-exit"));
  }

  /** The driver's actor stopped while a call was in flight or the run went on. */
  static Ending driverStopped() {
    return new Ending.DriverFailed(
        Diagnostic.of(Code.E_RUN_034, "the driver stopped unexpectedly"));
  }

  /**
   * The harness's actor stopped while the harness ran: it failed, or the run stopped it at {@link
   * #KILL_BOUND} ({@code abandoned}).
   */
  static Ending harnessStopped(boolean abandoned) {
    String why =
        abandoned
            ? "the harness did not exit within " + KILL_BOUND.toSeconds() + " s of its kill"
            : "the harness actor failed";
    return new Ending.HarnessFailed(Diagnostic.of(Code.E_RUN_007, why));
  }

  /** The {@code W-RUN-046} message: the run stopped waiting for the harness's exit. */
  static String abandoned() {
    return "the harness did not exit within "
        + KILL_BOUND.toSeconds()
        + " s of its kill; its process group is killed as soon as it can be";
  }

  /**
   * The bridge could not start. A tool that does not resolve is the capsule's fault on this node:
   * blocked. A bridge that cannot bind on loopback is this node's trouble: failed.
   */
  static Ending bridgeFailed(Diagnostic d) {
    return d.code() == Code.E_TOOL_001 ? new Ending.Blocked(d) : new Ending.HarnessFailed(d);
  }

  /** The bridge's host stopped before the run asked it to. */
  static Ending bridgeStopped() {
    return new Ending.HarnessFailed(
        Diagnostic.of(Code.E_TOOL_009, "the tool bridge stopped unexpectedly"));
  }

  /** The run's processes passed a resource limit: {@code E-RUN-047} (memory) or 048 (processes). */
  static boolean passedALimit(Diagnostic d) {
    return d.code() == Code.E_RUN_047 || d.code() == Code.E_RUN_048;
  }
}
