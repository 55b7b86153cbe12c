package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.runtime.hub.ProtocolSession;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The last steps of a run whose outcome is final (docs/run-semantics.md §10): wait for the clean-up
 * the run started as it decided (the plan's files directory removed and the trace closed, on the
 * blocking dispatcher), then hand the one report to the session, then start the retention of old
 * run directories; then it stops, and its parent with it. Each wait has a bound, so a stuck disk or
 * pool never leaves a run without its report.
 *
 * <p>It takes over the run's {@link RunJournal} (the trace writer is confined to one actor at a
 * time: the run writes nothing after handing it over, and has already asked it to close) and the
 * clean-up in flight. The run starts the clean-up itself, before this child is spawned, so the
 * files and the trace are on their way while this actor starts: its first message would be one more
 * hop on the way to every report.
 */
final class RunClosing {

  sealed interface Command {}

  private enum Cleaned implements Command {
    INSTANCE
  }

  private record Reported(ProtocolSession.Reported r) implements Command {}

  private enum Tick implements Command {
    CLEANUP_BOUND,
    REPORT_BOUND
  }

  /**
   * Bound on the clean-up before the report (files folder removed, trace flushed and closed): a few
   * small files, milliseconds; 30 s (a driver call's deadline) means the disk or the blocking pool
   * is stuck, not slow. Past it the report goes out with {@code W-RUN-045}; the clean-up still
   * finishes when it can.
   */
  static final Duration CLEANUP_BOUND = Duration.ofSeconds(30);

  /**
   * Bound on the session's answer to the report: a local child that answers at once, so 10 s means
   * it failed while handing the report on. The report is sent once more (a restarted session takes
   * it), then the run stops whether or not the answer came.
   */
  static final Duration REPORT_BOUND = Duration.ofSeconds(10);

  /**
   * What the run hands over.
   *
   * @param cleanUp the clean-up in flight ({@link RunEnd#cleanUp}): completes when the files
   *     directory is removed and the trace closed, however each went
   * @param prune the retention of old run directories, run on {@code blocking} after the report
   */
  record Handover(
      RunOutcome outcome,
      RunJournal journal,
      CompletableFuture<Void> cleanUp,
      Executor blocking,
      Runnable prune) {}

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final Handover h;
  private boolean resent;

  static Behavior<Command> create(Handover h) {
    return Behaviors.setup(
        ctx -> Behaviors.withTimers(timers -> new RunClosing(ctx, timers, h).cleaning()));
  }

  private RunClosing(ActorContext<Command> ctx, TimerScheduler<Command> timers, Handover h) {
    this.ctx = ctx;
    this.timers = timers;
    this.h = h;
  }

  /** The files directory goes before the report, so whoever reads the report finds it gone. */
  private Behavior<Command> cleaning() {
    ctx.pipeToSelf(h.cleanUp(), (v, err) -> Cleaned.INSTANCE);
    timers.startSingleTimer(Tick.CLEANUP_BOUND, CLEANUP_BOUND);
    return Behaviors.receive(Command.class)
        .onMessageEquals(Cleaned.INSTANCE, () -> report(h.outcome()))
        .onMessageEquals(Tick.CLEANUP_BOUND, this::onCleanupBound)
        .build();
  }

  private Behavior<Command> onCleanupBound() {
    String why = "the clean-up did not finish within " + CLEANUP_BOUND.toSeconds() + " s";
    h.journal().progress(new RunEvent.Warning(h.journal().taskId(), Code.W_RUN_045.id(), why));
    return report(RunEnd.withWarning(h.outcome(), Code.W_RUN_045, why));
  }

  private Behavior<Command> report(RunOutcome finished) {
    timers.cancel(Tick.CLEANUP_BOUND);
    RunOutcome outcome = finished;
    Optional<String> traceFailure = h.journal().writer().failure();
    if (traceFailure.isPresent()) {
      h.journal()
          .progress(
              new RunEvent.Warning(h.journal().taskId(), Code.W_RUN_044.id(), traceFailure.get()));
      outcome = RunEnd.withWarning(outcome, Code.W_RUN_044, traceFailure.get());
    }
    send(outcome);
    // Old finished runs go now (capsule.run.keep), off this thread; never this run's directory.
    CompletableFuture.runAsync(h.prune(), h.blocking());
    RunOutcome sent = outcome;
    return Behaviors.receive(Command.class)
        .onMessage(Reported.class, r -> Behaviors.stopped())
        .onMessageEquals(Tick.REPORT_BOUND, () -> onReportBound(sent))
        .onAnyMessage(m -> Behaviors.same()) // a clean-up finishing after its bound
        .build();
  }

  private void send(RunOutcome outcome) {
    h.journal().report(outcome, ctx.messageAdapter(ProtocolSession.Reported.class, Reported::new));
    timers.startSingleTimer(Tick.REPORT_BOUND, REPORT_BOUND);
  }

  private Behavior<Command> onReportBound(RunOutcome outcome) {
    if (!resent) {
      resent = true;
      send(outcome);
      return Behaviors.same();
    }
    ctx.getLog()
        .error("task {}: the session did not take the report; the run stops", h.journal().taskId());
    return Behaviors.stopped();
  }
}
