package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.Usage;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.core.TraceFile;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.core.TurnLedger;
import io.capsule.runtime.core.UsageSplits;
import io.capsule.runtime.harness.AppliedLaunch;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.javadsl.RunOutcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * What a run writes and tells when its outcome is final, apart from the actor: the outcome ({@link
 * Outcomes}) with the ledger's turns, usage and session, the trace's lines about the end ({@code
 * harness_failed}, {@code harness_exit}, {@code run_end}), the runtime's {@link
 * CapsuleRuntime.RunEnded}, and the file work that must be done before anyone reads the report (the
 * plan's files directory removed, the trace closed), off the actor thread. Pure, except {@link
 * #cleanUp}, whose work runs on the executor it is given.
 */
final class RunEnd {

  private RunEnd() {}

  /**
   * The {@code harness_failed} line of an ending the runtime decided; empty for the harness's own
   * endings (turn-end, a failed turn), which the ledger traces.
   */
  static Optional<TraceRecord> failure(Ending e) {
    if (e instanceof Ending.Completed || e instanceof Ending.TurnFailed) {
      return Optional.empty();
    }
    return Optional.of(
        TraceRecord.of("harness_failed")
            .with("kind", e.cause())
            .with("message", e.toString())
            .with("source", "runtime"));
  }

  /** The {@code harness_exit} line of a spawned harness's group. */
  static TraceRecord harnessExit(HarnessProcess.Exited exited, Ending e, Duration took) {
    return TraceRecord.of("harness_exit")
        .with("code", exited.code().orElse(null))
        .with("signal", exited.signal().orElse(null))
        .with("cause", e.cause())
        .with("killed", exited.killedByRuntime())
        .with("duration_ms", took.toMillis());
  }

  /**
   * The session the run used: the one the harness reported, else the planned one; empty when the
   * run never got as far as a ledger.
   */
  static Optional<String> sessionId(TurnLedger ledger, Session planned) {
    return ledger == null
        ? Optional.empty()
        : ledger.reportedSessionId().or(() -> Optional.of(planned.id()));
  }

  /** The outcome; read the ledger before {@link TurnLedger#finish()}. */
  static RunOutcome outcome(
      String taskId, Ending e, TurnLedger ledger, Optional<String> sessionId, Duration took) {
    return Outcomes.of(
            taskId,
            e,
            ledger == null ? 0 : ledger.turns(),
            ledger == null ? UsageSplit.ZERO : UsageSplits.of(ledger.usage()),
            sessionId,
            took)
        .withUnreported(UsageSplits.unreported(ledger == null ? Usage.NONE : ledger.usage()));
  }

  static TraceRecord runEnd(RunOutcome outcome) {
    return TraceRecord.of("run_end")
        .with("outcome", outcome.status().wire())
        .with("code", outcome.code().orElse(null));
  }

  /**
   * What the runtime learns: the session to remember only when a harness ran, and whether the
   * session to resume is gone ({@code E-RUN-036}), so it is forgotten.
   */
  static CapsuleRuntime.RunEnded ended(
      RunRequest request, boolean spawned, Optional<String> sessionId, RunOutcome outcome) {
    return new CapsuleRuntime.RunEnded(
        request,
        spawned ? sessionId : Optional.empty(),
        outcome.code().filter(Code.E_RUN_036.id()::equals).isPresent());
  }

  /**
   * Removes the plan's files directory (when one was applied) and closes the trace, on {@code
   * blocking}; completes when both are done, so the report can follow.
   */
  static CompletableFuture<Void> cleanUp(
      AppliedLaunch applied, TraceFile trace, Executor blocking) {
    // The trace is complete on disk before anyone reads the report.
    return CompletableFuture.runAsync(() -> closeQuietly(applied), blocking)
        .thenCombine(trace.close(), (a, b) -> (Void) null);
  }

  /**
   * The outcome with a warning in its message ({@code W-RUN-044}: the trace could not be written;
   * {@code W-RUN-045}: the clean-up did not finish in time), so the report says the trace may be
   * missing or cut short.
   */
  static RunOutcome withWarning(RunOutcome o, Code warning, String why) {
    return new RunOutcome(
        o.taskId(),
        o.status(),
        o.result(),
        o.turns(),
        o.usage(),
        o.code(),
        o.failureType(),
        o.message() + " [" + warning.id() + ": " + why + "]",
        o.sessionId(),
        o.duration(),
        o.unreported()); // "not reported" stays so, never 0
  }

  /** Removes an applied plan's files directory (on the caller's thread: call it off the actor). */
  static void removeFiles(AppliedLaunch a) {
    closeQuietly(a);
  }

  private static void closeQuietly(AppliedLaunch a) {
    if (a != null) {
      try {
        a.close();
      } catch (RuntimeException ignored) {
        // Best effort: the directory lives under the run's own directory.
      }
    }
  }
}
