package io.capsule.runtime;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.Session;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.core.TurnLedger;
import io.capsule.runtime.harness.AppliedLaunch;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * How a run ends (docs/run-semantics.md §9): the first ending decided wins, except a cancel, after
 * which the outcome is canceled whatever follows. Deciding stops the ledger, makes the bridge
 * refuse new calls and stops the harness (kill at once, or close stdin and give it the terminal
 * grace). The run then {@linkplain #settle() settles} each time something it waits for arrives, and
 * finishes once: only when no driver call is in flight, the harness's group is gone and drained
 * (when one was spawned), an exit without a terminal event was classified by the driver, and the
 * bridge has stopped. Finishing writes the trace's end, tells the runtime, and removes the files
 * directory and closes the trace off the actor thread; the report follows that ({@code
 * afterCleanup}).
 *
 * <p>Confined to the run's actor thread.
 */
final class RunEnding {

  private final RunStart start;
  private final RunJournal journal;
  private final RunHarness harness;
  private final RunDriver driver;
  private final RunBridge bridge;
  private final TimerScheduler<CapsuleRun.Command> timers;
  private final Clock clock;
  private final Instant startedAt;
  private final Executor blocking;
  private final BiConsumer<CompletableFuture<Void>, RunOutcome> afterCleanup;

  private TurnLedger ledger;
  private Session plannedSession;
  private AppliedLaunch applied;
  private Optional<Ending> ending = Optional.empty();
  private Optional<Ending.Canceled> canceled = Optional.empty();
  private boolean finished;

  /**
   * @param afterCleanup given the cleanup in flight and the outcome; the run reports the outcome
   *     when the cleanup completed
   */
  RunEnding(
      RunStart start,
      RunJournal journal,
      RunHarness harness,
      RunDriver driver,
      RunBridge bridge,
      TimerScheduler<CapsuleRun.Command> timers,
      Clock clock,
      Instant startedAt,
      Executor blocking,
      BiConsumer<CompletableFuture<Void>, RunOutcome> afterCleanup) {
    this.start = start;
    this.journal = journal;
    this.harness = harness;
    this.driver = driver;
    this.bridge = bridge;
    this.timers = timers;
    this.clock = clock;
    this.startedAt = startedAt;
    this.blocking = blocking;
    this.afterCleanup = afterCleanup;
  }

  /** The session is planned and the ledger exists: from now on the outcome has turns and usage. */
  void planned(TurnLedger turnLedger, Session session) {
    ledger = turnLedger;
    plannedSession = session;
  }

  /** The plan's files directory: removed when the run finishes, or when it stops. */
  void applied(AppliedLaunch launch) {
    applied = launch;
  }

  boolean finished() {
    return finished;
  }

  boolean canceled() {
    return canceled.isPresent();
  }

  /** Finished, or an ending or a cancel is decided: nothing new may start. */
  boolean over() {
    return finished || ending.isPresent() || canceled.isPresent();
  }

  /**
   * Records a cancel and makes the bridge refuse new calls; interrupting the harness is the
   * caller's.
   *
   * @return false when the outcome was already decided: a late cancel changes nothing
   */
  boolean cancel(String reason) {
    if (over()) {
      return false;
    }
    canceled = Optional.of(new Ending.Canceled(reason));
    bridge.beginEnding();
    return true;
  }

  /** Decides the outcome if none is yet (the first wins), then {@link #settle()}s. */
  void decide(Ending e) {
    if (ending.isEmpty()) {
      ending = Optional.of(e);
      bridge.beginEnding();
      if (ledger != null) {
        ledger.stop(e);
      }
      RunEnd.failure(e).ifPresent(journal::trace);
      if (e.killAtOnce()) {
        harness.kill(e.cause());
      } else {
        harness.startTerminalGrace();
      }
    }
    settle();
  }

  /** Finishes the run if nothing it must wait for is left; otherwise does the next step. */
  void settle() {
    if (finished || driver.busy()) {
      return;
    }
    boolean spawned = harness.spawned();
    if (spawned && !harness.settled()) {
      return; // the group must be gone before the report
    }
    Optional<Ending> decided = canceled.map(Ending.class::cast).or(() -> ending);
    if (spawned && ledger.ending().isEmpty() && harness.stdinFailure().isPresent() && !canceled()) {
      decide(new Ending.HarnessFailed(harness.stdinFailure().get()));
      return;
    } else if (spawned && ledger.ending().isEmpty() && driver.present()) {
      // EOF without a terminal event: the driver classifies the exit.
      HarnessProcess.Exited x = harness.exit();
      driver.classify(new ExitStatus(x.code(), x.signal(), x.stderrTail(), canceled(), false));
      return;
    }
    if (decided.isEmpty()) {
      if (!spawned) {
        return; // still starting
      }
      decided =
          Optional.of(
              new Ending.DriverFailed(
                  Diagnostic.of(Code.E_RUN_034, "the run ended with no outcome")));
    }
    // The bridge goes first: the calls it kills are traced before the run's end.
    if (bridge.stopFirst()) {
      return;
    }
    finish(decided.get(), spawned);
  }

  /** The bridge's host stopped: expected when the run stopped it, a failure while in use. */
  void bridgeGone() {
    if (bridge.onGone() && !over()) {
      // It stopped on its own while the harness may still call it: the run cannot keep its
      // contract with the harness.
      decide(
          new Ending.HarnessFailed(
              Diagnostic.of(Code.E_TOOL_009, "the tool bridge stopped unexpectedly")));
    } else {
      settle();
    }
  }

  /**
   * The bridge could not start. A tool that does not resolve is the capsule's fault on this node:
   * blocked. A bridge that cannot bind on loopback is this node's trouble: failed.
   */
  void bridgeFailed(Diagnostic d) {
    decide(d.code() == Code.E_TOOL_001 ? new Ending.Blocked(d) : new Ending.HarnessFailed(d));
  }

  private void finish(Ending e, boolean spawned) {
    finished = true;
    timers.cancelAll();
    Duration took = Duration.between(startedAt, clock.instant());
    if (spawned) {
      journal.trace(RunEnd.harnessExit(harness.exit(), e, took));
    }
    Optional<String> sessionId = RunEnd.sessionId(ledger, plannedSession);
    RunOutcome outcome = RunEnd.outcome(journal.taskId(), e, ledger, sessionId, took);
    if (ledger != null) {
      journal.trace(ledger.finish());
    }
    journal.trace(RunEnd.runEnd(outcome));
    journal.progress(new RunEvent.StateChanged(journal.taskId(), RunPhase.FINISHED));
    start.runtime().tell(RunEnd.ended(start.request(), spawned, sessionId, outcome));
    // The files directory goes before the report, so whoever reads the report finds it gone.
    afterCleanup.accept(RunEnd.cleanUp(takeApplied(), journal.writer(), blocking), outcome);
  }

  /** The run stopped: what finishing did not clean is cleaned now, off the actor thread. */
  void release() {
    RunEnd.cleanUp(takeApplied(), journal.writer(), blocking);
  }

  private AppliedLaunch takeApplied() {
    AppliedLaunch a = applied;
    applied = null;
    return a;
  }
}
