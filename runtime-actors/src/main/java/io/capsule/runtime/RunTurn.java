package io.capsule.runtime;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.bridge.ToolCallEvent;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.core.LedgerStep;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.core.TurnLedger;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunPhase;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * A run's turn once its harness is spawned (docs/run-semantics.md §5, §9): stdout batches go to the
 * driver (one in flight; each acknowledged, parsed or dropped, so the harness's output keeps
 * draining), the driver's events go into the ledger, and the harness's and the driver's failures,
 * silence and interrupts become endings. The inactivity window is one of the run's timers: harness
 * output and bridge requests restart it, and a tool call in flight holds it open (the harness is
 * waiting on its own call, bounded by the bridge's call timeout). Tool calls are traced and
 * reported with the turn they happened in.
 *
 * <p>Confined to the run's actor thread. Every handler ends by letting the ending {@linkplain
 * RunEnding#settle() settle}, directly or through a decision.
 */
final class RunTurn {

  private final RunJournal journal;
  private final RunHarness harness;
  private final RunDriver driver;
  private final RunBridge bridge;
  private final RunEnding ending;
  private final TimerScheduler<CapsuleRun.Command> timers;
  private final RunLimits limits;
  private final Clock clock;

  private TurnLedger ledger;
  private InterruptMethod interruptMethod;
  private Optional<byte[]> interruptStdin = Optional.empty();

  RunTurn(
      RunJournal journal,
      RunHarness harness,
      RunDriver driver,
      RunBridge bridge,
      RunEnding ending,
      TimerScheduler<CapsuleRun.Command> timers,
      RunLimits limits,
      Clock clock) {
    this.journal = journal;
    this.harness = harness;
    this.driver = driver;
    this.bridge = bridge;
    this.ending = ending;
    this.timers = timers;
    this.limits = limits;
    this.clock = clock;
  }

  /**
   * @param method how the driver interrupts a turn (its description's {@code interrupt})
   */
  void planned(TurnLedger turnLedger, InterruptMethod method) {
    ledger = turnLedger;
    interruptMethod = method;
  }

  /**
   * The harness was spawned: the inactivity window opens.
   *
   * @param stdin the plan's {@code interrupt-stdin}, for an interrupt by {@code stdin-message}
   */
  void started(Optional<byte[]> stdin) {
    interruptStdin = stdin;
    timers.startSingleTimer(CapsuleRun.Tick.INACTIVITY, limits.inactivityTimeout());
  }

  /**
   * Cancels the task: before the spawn nothing is spawned and the run ends canceled (after an apply
   * in flight); after it, the turn is interrupted by the driver's method. A cancel after the
   * outcome is decided changes nothing.
   */
  void cancel(String reason) {
    if (!ending.cancel(reason)) {
      return;
    }
    if (!harness.present()) {
      ending.settle();
      return;
    }
    journal.progress(new RunEvent.StateChanged(journal.taskId(), RunPhase.INTERRUPTING));
    if (interruptMethod == InterruptMethod.UNSUPPORTED) {
      onInterruptResult(false);
    } else {
      harness.interrupt(interruptMethod, interruptStdin);
    }
  }

  /** The driver's actor stopped: a failure unless nothing was asked of it. */
  void driverStopped() {
    boolean busy = driver.busy();
    boolean wasParsing = driver.onGone();
    if (!ending.finished() && !busy) {
      ending.settle();
      return;
    }
    if (wasParsing) {
      harness.batchHandled();
    }
    ending.decide(
        new Ending.DriverFailed(Diagnostic.of(Code.E_RUN_034, "the driver stopped unexpectedly")));
  }

  /** The harness's actor stopped: a failure while the harness ran. */
  void harnessStopped() {
    if (harness.onChildStopped()) {
      // Its PostStop killed the group; it will not report an exit now.
      ending.decide(
          new Ending.HarnessFailed(Diagnostic.of(Code.E_RUN_007, "the harness actor failed")));
    } else {
      ending.settle();
    }
  }

  void onHarness(HarnessProcess.Event e) {
    if (e instanceof HarnessProcess.Lines lines) {
      if (driver.classifying() || ending.finished() || harness.drainGivenUp()) {
        // Output after the run stopped waiting for it: not parsed, only noted.
        journal.trace(
            TraceRecord.of("harness_note")
                .with("note", "stdout lines after the end ignored")
                .with("lines", lines.lines().size()));
        harness.batchHandled();
        return;
      }
      timers.startSingleTimer(CapsuleRun.Tick.INACTIVITY, limits.inactivityTimeout());
      if (!driver.parse(lines.lines())) {
        harness.batchHandled(); // no driver any more: dropped, and the output keeps draining
      }
    } else if (e instanceof HarnessProcess.LineCut cut) {
      journal.harnessNote(cut.note());
    } else if (e instanceof HarnessProcess.StdoutEnded) {
      harness.onStdoutEnded();
      harness.startTerminalGrace();
    } else if (e instanceof HarnessProcess.InterruptResult ir) {
      onInterruptResult(ir.delivered());
    } else if (e instanceof HarnessProcess.Exited x) {
      timers.cancel(CapsuleRun.Tick.INACTIVITY);
      harness.onExited(x);
    } else if (e instanceof HarnessProcess.SpawnFailed sf) {
      harness.onSpawnFailed();
      ending.decide(new Ending.HarnessFailed(sf.diagnostic()));
      return;
    } else if (e instanceof HarnessProcess.StdinFailed sf) {
      // A harness that closed its stdin may still finish its turn: a terminal event wins; only an
      // exit without one is "could not be fed" (E-RUN-007) instead of being classified.
      harness.onStdinFailed(sf.diagnostic());
      journal.harnessNote(sf.diagnostic().message());
    }
    ending.settle();
  }

  /** A driver reply other than {@code Launched} (that one belongs to the run's start). */
  void onDriver(Driver.Reply r) {
    if (r instanceof Driver.Parsed p) {
      driver.onParsed();
      apply(p.events());
      harness.batchHandled();
    } else if (r instanceof Driver.Classified c) {
      driver.onClassified();
      if (c.event().isTerminal()) {
        apply(List.of(c.event()));
      } else {
        ending.decide(
            new Ending.DriverFailed(
                Diagnostic.of(
                        Code.E_RUN_034, "failed in classify-exit: returned " + c.event().witName())
                    .with("function", "classify-exit")));
      }
    } else if (r instanceof Driver.Failed f) {
      if (driver.onGone()) {
        harness.batchHandled(); // the batch is not parsed, but the output must keep draining
      }
      ending.decide(new Ending.DriverFailed(f.diagnostic()));
      return;
    }
    ending.settle();
  }

  /** A timer of the turn ({@code PROBE_BOUND} belongs to the run's start). */
  void onTick(CapsuleRun.Tick t) {
    switch (t) {
      case INACTIVITY -> {
        if (bridge.callsInFlight()) {
          timers.startSingleTimer(CapsuleRun.Tick.INACTIVITY, limits.inactivityTimeout());
        } else {
          ending.decide(new Ending.Inactive(limits.inactivityTimeout().toMillis()));
        }
      }
      case TERMINAL_GRACE -> harness.kill("terminal grace elapsed");
      case INTERRUPT_GRACE -> harness.kill("interrupt grace elapsed");
      case DRAIN_BOUND -> {
        if (harness.onDrainBound()) {
          ending.settle(); // killed and still no end of stdout: report rather than wait forever
        }
      }
      case PROBE_BOUND -> throw new IllegalArgumentException("not a timer of the turn: " + t);
    }
  }

  /** A bridge request with the right token: the harness is alive. */
  void bridgeActivity() {
    if (harness.running()
        && !ending.finished()
        && !driver.classifying()
        && !harness.drainGivenUp()) {
      timers.startSingleTimer(CapsuleRun.Tick.INACTIVITY, limits.inactivityTimeout());
    }
  }

  /** A bridge call started or finished: counted, traced and reported with the current turn. */
  void onToolCall(ToolCallEvent e) {
    bridge.count(e);
    int turn = ledger == null ? 0 : ledger.turns();
    journal.trace(BridgeAccounting.trace(e, turn));
    journal.progress(BridgeAccounting.progress(journal.taskId(), e, turn));
  }

  private void onInterruptResult(boolean delivered) {
    journal.trace(
        TraceRecord.of("harness_interrupt")
            .with("method", interruptMethod.witName())
            .with("delivered", delivered)
            .with("grace_ms", delivered ? limits.interruptGrace().toMillis() : 0));
    if (delivered) {
      harness.startInterruptGrace(); // absolute: output during the grace does not extend it
      journal.progress(
          new RunEvent.Note(
              journal.taskId(),
              "interrupt delivered; the harness has "
                  + limits.interruptGrace().toMillis()
                  + " ms to end"));
    } else {
      harness.kill("interrupt not delivered");
    }
  }

  private void apply(List<Event> events) {
    LedgerStep step = ledger.apply(events, clock.instant());
    journal.trace(step.trace());
    step.progress().forEach(journal::progress);
    step.ending().ifPresent(ending::decide);
  }
}
