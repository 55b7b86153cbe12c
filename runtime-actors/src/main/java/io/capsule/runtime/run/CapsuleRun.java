package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.Session;
import io.capsule.runtime.CapsuleSerializable;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.bridge.ToolBridgeHost;
import io.capsule.runtime.bridge.ToolCallEvent;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.core.Failures;
import io.capsule.runtime.core.LedgerStep;
import io.capsule.runtime.core.RunRetention;
import io.capsule.runtime.core.TraceFile;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.core.TurnLedger;
import io.capsule.runtime.driver.Driver;
import io.capsule.runtime.driver.ResolvedCapsule;
import io.capsule.runtime.harness.AppliedLaunch;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.hub.ProtocolSession;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import io.capsule.runtime.metrics.RunLog;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.BehaviorBuilder;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The supervisor of one capsule run (docs/run-semantics.md §3–§9). It decides and routes; it never
 * parses and never does I/O on its own thread: the {@link RunPreparation} child resolves, plans and
 * probes, the {@link Driver} child parses, the {@link HarnessProcess} child owns the process group,
 * the {@link ProtocolSession} child reports, the {@link RunClosing} child awaits the clean-up and
 * hands the report over, file work runs on the blocking dispatcher. How the run ends is one pure
 * decision, {@link RunGate}: every fact goes to the gate and {@link #settle()} carries out what it
 * says. The run's own waits are timers ({@link Tick}), started and cancelled only here; the
 * children that wait own their bounds.
 *
 * <p>One behavior per phase: {@linkplain #starting() starting} (the preparation, then start the
 * bridge, launch, apply the plan), {@linkplain #running() running} (the harness's output through
 * the driver and the ledger) and {@linkplain #ending() ending} (the outcome is final: the closing
 * child takes the journal and the plan; the run stops when it is done). Supervision of the children
 * is declared where they are spawned.
 *
 * <p>Over 400 lines because the run's middle is one actor: launch, turn and interrupt share the
 * driver, the harness, the bridge, the gate and the run's timers, and splitting those handlers into
 * collaborators that call back is what issue 16 undid. What stands apart is out: the preparation
 * and the closing are children with their own messages and timers; the shapes of what the run
 * writes and the endings it names are pure ({@link RunLaunch}, {@link RunEnd}, {@link RunFaults},
 * {@link HarnessNotes}, {@link BridgeAccounting}).
 */
public final class CapsuleRun {

  public sealed interface Command {}

  /** Cancel the task: interrupt the turn by the driver's method, or spawn nothing. */
  public record Cancel(String reason) implements Command, CapsuleSerializable {}

  private record FromPreparation(RunPreparation.Report report) implements Command {}

  private record Applied(AppliedLaunch launch, Throwable failure) implements Command {}

  private record FromDriver(Driver.Reply reply) implements Command {}

  private record FromHarness(HarnessProcess.Event event) implements Command {}

  private record FromBridge(ToolBridgeHost.Report report) implements Command {}

  private enum DriverStopped implements Command {
    INSTANCE
  }

  private enum HarnessStopped implements Command {
    INSTANCE
  }

  private enum BridgeStopped implements Command {
    INSTANCE
  }

  private enum ClosingStopped implements Command {
    INSTANCE
  }

  /** The run's timers; only this actor starts and cancels them. */
  private enum Tick implements Command {
    APPLY_BOUND,
    INACTIVITY,
    TERMINAL_GRACE,
    INTERRUPT_GRACE,
    DRAIN_BOUND,
    KILL_BOUND
  }

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final RunStart start;
  private final RunServices services;
  private final RunLimits limits;
  private final String taskId;
  private final Executor blocking;
  private final Instant startedAt;
  private final Path runDir;
  private final RunJournal journal;
  private final ActorRef<Driver.Reply> driverReplies;
  private final RunGate gate = new RunGate();

  private ResolvedCapsule capsule;
  private Session plannedSession;
  private TurnLedger ledger;
  private Optional<String> harnessVersion = Optional.empty();
  private LaunchPlan plan;
  private Optional<Bridge> bridge = Optional.empty();
  private AppliedLaunch applied;
  private CompletableFuture<AppliedLaunch> applying; // until the plan is back or abandoned
  private HarnessProcess.Exited exit;
  private ActorRef<Driver.Command> driver;
  private ActorRef<HarnessProcess.Command> harness;
  private ActorRef<ToolBridgeHost.Command> bridgeHost;
  private ActorRef<RunPreparation.Command> preparation;
  private ActorRef<RunClosing.Command> closing;
  private boolean harnessAbandoned; // stopped by the run at the kill's bound

  public static Behavior<Command> create(RunStart start, RunServices services) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new CapsuleRun(ctx, timers, start, services).starting()));
  }

  private CapsuleRun(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunStart start,
      RunServices services) {
    this.ctx = ctx;
    this.timers = timers;
    this.start = start;
    this.services = services;
    this.limits = services.limits();
    this.taskId = start.request().taskId();
    this.blocking =
        ctx.getSystem()
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig(limits.blockingDispatcher()));
    this.startedAt = services.clock().instant();
    this.runDir = limits.workRoot().resolve(RunDirs.name(taskId, startedAt));
    // ProtocolSession: restarted on failure; it holds no buffer of its own (the hub link's
    // sequencing machine does), so a restart loses nothing.
    ActorRef<ProtocolSession.Command> session =
        ctx.spawn(
            Behaviors.supervise(
                    ProtocolSession.create(
                        taskId,
                        start.listener(),
                        start.listenerBatches(),
                        start.hub(),
                        ctx.getSelf()))
                .onFailure(SupervisorStrategy.restart()),
            "session");
    // The run directory and the trace are made and written on the blocking dispatcher.
    this.journal =
        new RunJournal(taskId, new TraceFile(runDir, services.clock(), blocking), session);
    this.driverReplies = ctx.messageAdapter(Driver.Reply.class, FromDriver::new);
    journal.trace(
        TraceRecord.of("run_start")
            .with("task_id", taskId)
            .with("capsule", start.request().capsule().key()));
    RunLog.started(taskId, start.request().capsule()); // one INFO line per run step
    journal.phase(RunPhase.ACCEPTED);
    // The preparation: resolve, plan, probe, each bounded. Watched without a message: it fails
    // only by a bug, which fails this run too (E-RUN-040, as any bug of the run). This actor stops
    // it, unwatched, once it has said all it will.
    preparation =
        ctx.spawn(
            RunPreparation.create(
                start.request(),
                services,
                start.runtime(),
                workdir(),
                ctx.messageAdapter(RunPreparation.Report.class, FromPreparation::new)),
            "preparation");
    ctx.watch(preparation);
  }

  // --- the phases -----------------------------------------------------------------------------

  /** Until the harness is spawned: every step of the start, and what may end the run early. */
  private Behavior<Command> starting() {
    return common()
        .onMessage(FromPreparation.class, m -> onPreparation(m.report()))
        .onMessage(Applied.class, this::onApplied)
        .build();
  }

  /** The harness runs: its output goes through the driver and the ledger. */
  private Behavior<Command> running() {
    return common()
        .onMessage(FromHarness.class, m -> onHarness(m.event()))
        .onMessageEquals(HarnessStopped.INSTANCE, this::onHarnessStopped)
        .build();
  }

  /** What both the start and the turn handle: a cancel, the children, the timers, the bridge. */
  private BehaviorBuilder<Command> common() {
    return Behaviors.receive(Command.class)
        .onMessage(Cancel.class, c -> onCancel(c.reason()))
        .onMessage(FromDriver.class, m -> onDriver(m.reply()))
        .onMessageEquals(DriverStopped.INSTANCE, this::onDriverStopped)
        .onMessage(Tick.class, this::onTick)
        .onMessage(FromBridge.class, m -> onBridge(m.report()))
        .onMessageEquals(BridgeStopped.INSTANCE, this::onBridgeStopped)
        .onSignal(PostStop.class, s -> release());
  }

  /**
   * The outcome is final: the files directory is removed and the trace closed (off this thread),
   * then the one report, then the run stops, after a plan still being applied has come back (its
   * files directory is removed on stop). Anything else is late and changes nothing; a batch of
   * lines is still acknowledged so the harness's output keeps draining.
   */
  private Behavior<Command> ending() {
    return Behaviors.receive(Command.class)
        .onMessageEquals(ClosingStopped.INSTANCE, Behaviors::stopped)
        .onMessage(FromHarness.class, m -> acknowledgeLate(m.event()))
        .onAnyMessage(m -> Behaviors.same())
        .onSignal(PostStop.class, s -> release())
        .build();
  }

  // --- the start ------------------------------------------------------------------------------

  private Behavior<Command> onPreparation(RunPreparation.Report r) {
    if (gate.over()) {
      stopPreparation(); // the run ends before it started: what is left to learn is moot
      return settle();
    }
    if (r instanceof RunPreparation.Refused refused) {
      stopPreparation();
      return decide(refused.ending());
    } else if (r instanceof RunPreparation.Ready ready) {
      onReady(ready);
      return Behaviors.same();
    }
    stopPreparation();
    return onVersioned(((RunPreparation.Versioned) r).version());
  }

  private void stopPreparation() {
    if (preparation != null) {
      ctx.unwatch(preparation);
      ctx.stop(preparation);
      preparation = null;
    }
  }

  private void onReady(RunPreparation.Ready ready) {
    capsule = ready.capsule();
    plannedSession = ready.session();
    ledger = RunLaunch.ledger(taskId, capsule, start.request(), plannedSession);
    capsule.manifest().warnings().forEach(d -> journal.warn(d.code(), d.message()));
    journal.phase(RunPhase.STARTING);
    capsule.describeNotes().forEach(n -> journal.progress(new RunEvent.Note(taskId, n)));
  }

  private Behavior<Command> onVersioned(Optional<String> version) {
    harnessVersion = version;
    RunLaunch.untested(capsule, harnessVersion).ifPresent(m -> journal.warn(Code.W_RUN_002, m));
    ToolNarrowing tools = ToolNarrowing.forRun(capsule, start.request(), journal);
    if (tools.offered().isEmpty()) {
      return launchDriver();
    }
    // The bridge's host: stops on failure and is watched; launch follows when it is listening.
    bridgeHost =
        ctx.spawn(
            RunBridge.host(
                limits,
                capsule,
                services.hostEnv(),
                workdir(),
                tools.offered(),
                blocking,
                ctx.messageAdapter(ToolBridgeHost.Report.class, FromBridge::new)),
            "bridge");
    ctx.watchWith(bridgeHost, BridgeStopped.INSTANCE);
    gate.bridgeSpawned();
    return Behaviors.same();
  }

  private Behavior<Command> launchDriver() {
    // The driver: stops on any failure and is watched; never restarted (its instance holds what
    // launch was told, which a fresh instance would not know).
    driver =
        ctx.spawn(
            Driver.create(
                capsule.drivers(), limits.driverCallTimeout(), limits.blockingDispatcher()),
            "driver");
    ctx.watchWith(driver, DriverStopped.INSTANCE);
    gate.driverSpawned();
    driver.tell(
        new Driver.Launch(
            RunLaunch.request(capsule, start.request(), bridge, plannedSession, harnessVersion),
            driverReplies));
    return Behaviors.same();
  }

  private Behavior<Command> onLaunched(Driver.Launched launched) {
    if (gate.over()) {
      return settle();
    }
    if (launched.result() instanceof LaunchResult.Refused refused) {
      return decide(RunLaunch.refused(refused));
    }
    plan = ((LaunchResult.Planned) launched.result()).plan();
    applying =
        RunLaunch.apply(plan, capsule, workdir(), runDir, services.hostEnv(), bridge, blocking);
    timers.startSingleTimer(Tick.APPLY_BOUND, RunFaults.APPLY_BOUND);
    ctx.pipeToSelf(applying, (a, e) -> new Applied(a, Failures.unwrap(e)));
    return Behaviors.same();
  }

  private Behavior<Command> onApplied(Applied a) {
    applying = null;
    timers.cancel(Tick.APPLY_BOUND);
    if (a.failure() != null) {
      return decide(RunLaunch.notApplied(a.failure()));
    }
    applied = a.launch();
    if (gate.over()) {
      return settle(); // a cancel (or a failure) arrived while the plan was applied: spawn nothing
    }
    journal.trace(RunLaunch.harnessStart(capsule, harnessVersion, plannedSession, plan, applied));
    // The harness: stops on failure (a restart would spawn the harness again) and is watched.
    harness =
        ctx.spawn(
            HarnessProcess.create(
                applied,
                ctx.messageAdapter(HarnessProcess.Event.class, FromHarness::new),
                limits.harness()),
            "harness");
    ctx.watchWith(harness, HarnessStopped.INSTANCE);
    gate.harnessSpawned();
    journal.phase(RunPhase.RUNNING);
    timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
    return running();
  }

  // --- the turn -------------------------------------------------------------------------------

  private Behavior<Command> onHarness(HarnessProcess.Event e) {
    if (e instanceof HarnessProcess.Lines lines) {
      if (!gate.acceptsLines()) {
        return lateHarness(e);
      }
      timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
      if (gate.parseStarted()) {
        driver.tell(new Driver.Parse(lines.lines(), driverReplies));
      } else {
        batchHandled(); // no driver any more: dropped, and the output keeps draining
      }
      return Behaviors.same();
    } else if (e instanceof HarnessProcess.LineCut cut) {
      journal.harnessNote(cut.note());
    } else if (e instanceof HarnessProcess.StdoutEnded) {
      gate.stdoutEnded();
    } else if (e instanceof HarnessProcess.InterruptResult ir) {
      onInterruptResult(ir.delivered());
    } else if (e instanceof HarnessProcess.Exited x) {
      exit = x;
      removeFilesNow();
      timers.cancel(Tick.INACTIVITY);
      timers.cancel(Tick.TERMINAL_GRACE);
      timers.cancel(Tick.INTERRUPT_GRACE);
      timers.cancel(Tick.KILL_BOUND);
      gate.exited(new RunGate.Exit(x.code(), x.signal(), x.stderrTail()));
    } else if (e instanceof HarnessProcess.SpawnFailed sf) {
      gate.spawnFailed();
      harness = null;
      return decide(new Ending.HarnessFailed(sf.diagnostic()));
    } else if (e instanceof HarnessProcess.Spawned sp) {
      RunLog.spawned(taskId, sp.pid());
      if (bridgeHost != null) {
        bridgeHost.tell(new ToolBridgeHost.Contain(sp.sandbox())); // its tools run in it too
      }
    } else if (e instanceof HarnessProcess.ContainmentDecided c) {
      journal.trace(HarnessNotes.containment(c));
      c.warning().ifPresent(w -> journal.warn(w.code(), w.message()));
      c.limitWarnings().forEach(w -> journal.warn(w.code(), w.message()));
    } else if (e instanceof HarnessProcess.LimitPassed lp) {
      return decide(new Ending.HarnessFailed(lp.diagnostic())); // E-RUN-047/048
    } else if (e instanceof HarnessProcess.EgressRefused r) {
      journal.trace(HarnessNotes.egressRefused(r));
      journal.warn(Code.W_CAP_052, r.reason());
    } else if (e instanceof HarnessProcess.StdinFailed sf) {
      gate.stdinFailed(sf.diagnostic());
      journal.harnessNote(sf.diagnostic().message());
    }
    return settle();
  }

  /**
   * The harness's group is gone ({@link HarnessProcess.Exited} comes only after its kill), so
   * nothing reads the files directory any more: its removal starts now, off this thread, while the
   * run still waits for stdout's end or the driver's classification, instead of on the way to the
   * report. The clean-up's own removal then waits for this one ({@link AppliedLaunch#close} is
   * idempotent and synchronized), so the report still follows the directory's removal.
   */
  private void removeFilesNow() {
    AppliedLaunch a = applied;
    if (a != null) {
      CompletableFuture.runAsync(() -> RunEnd.removeFiles(a), blocking);
    }
  }

  /** Output after the journal was handed over: acknowledged, so the output keeps draining. */
  private Behavior<Command> acknowledgeLate(HarnessProcess.Event e) {
    if (e instanceof HarnessProcess.Lines) {
      batchHandled();
    }
    return Behaviors.same();
  }

  /** Output after the run stopped waiting for it: not parsed, only noted, and acknowledged. */
  private Behavior<Command> lateHarness(HarnessProcess.Event e) {
    if (e instanceof HarnessProcess.Lines lines) {
      journal.trace(HarnessNotes.linesIgnored(lines));
      batchHandled();
    }
    return Behaviors.same();
  }

  private Behavior<Command> onDriver(Driver.Reply r) {
    if (r instanceof Driver.Launched launched) {
      return onLaunched(launched);
    } else if (r instanceof Driver.Parsed p) {
      gate.parsed();
      apply(p.events());
      batchHandled();
    } else if (r instanceof Driver.Classified c) {
      gate.classified();
      if (c.event().isTerminal()) {
        apply(List.of(c.event()));
      } else {
        return decide(RunFaults.notTerminal(c.event()));
      }
    } else if (r instanceof Driver.Failed f) {
      // The batches sent are not parsed, but the output must keep draining.
      batchesHandled(gate.driverGone());
      driver = null;
      return decide(new Ending.DriverFailed(f.diagnostic()));
    }
    return settle();
  }

  private void apply(List<Event> events) {
    events.stream().filter(Event::isTerminal).forEach(t -> RunLog.turnEnded(taskId, t.witName()));
    LedgerStep step = ledger.apply(events, services.clock().instant());
    journal.trace(step.trace());
    journal.progress(step.progress());
    step.ending().ifPresent(this::decideOnly);
  }

  /** The driver's actor stopped: a failure if a call was in flight or the run goes on. */
  private Behavior<Command> onDriverStopped() {
    boolean busy = gate.driverBusy();
    int unparsed = gate.driverGone();
    driver = null;
    if (!busy) {
      return settle();
    }
    batchesHandled(unparsed);
    return decide(RunFaults.driverStopped());
  }

  /** The harness's actor stopped: a failure while the harness ran (its PostStop killed it). */
  private Behavior<Command> onHarnessStopped() {
    harness = null;
    if (gate.harnessStopped()) {
      exit = new HarnessProcess.Exited(Optional.empty(), Optional.empty(), "", true);
      return decide(RunFaults.harnessStopped(harnessAbandoned));
    }
    return settle();
  }

  /**
   * Cancels the task: before the spawn nothing is spawned and the run ends canceled (after an apply
   * in flight); after it, the turn is interrupted by the driver's method.
   */
  private Behavior<Command> onCancel(String reason) {
    if (!gate.cancel(reason)) {
      return Behaviors.same(); // the outcome is decided: a late cancel changes nothing
    }
    beginEnding();
    if (!gate.harnessPresent()) {
      return settle(); // spawns nothing; a plan being applied is removed when it comes back
    }
    journal.phase(RunPhase.INTERRUPTING);
    InterruptMethod method = capsule.description().interrupt();
    if (method == InterruptMethod.UNSUPPORTED) {
      onInterruptResult(false);
    } else {
      harness.tell(new HarnessProcess.Interrupt(method, plan.interruptStdin()));
    }
    return settle();
  }

  private void onInterruptResult(boolean delivered) {
    Duration grace = limits.interruptGrace();
    journal.trace(HarnessNotes.interrupt(capsule.description().interrupt(), delivered, grace));
    if (delivered) {
      // Absolute: output during the grace does not extend it.
      timers.startSingleTimer(Tick.INTERRUPT_GRACE, grace);
      journal.progress(new RunEvent.Note(taskId, HarnessNotes.interruptDelivered(grace)));
    } else {
      gate.requestKill("interrupt not delivered");
    }
  }

  private Behavior<Command> onTick(Tick t) {
    switch (t) {
      case APPLY_BOUND -> {
        return decide(RunFaults.notAppliedInTime());
      }
      case INACTIVITY -> {
        if (gate.callsInFlight()) {
          timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
          return Behaviors.same();
        }
        return decide(new Ending.Inactive(limits.inactivityTimeout().toMillis()));
      }
      case TERMINAL_GRACE -> gate.requestKill("terminal grace elapsed");
      case INTERRUPT_GRACE -> gate.requestKill("interrupt grace elapsed");
      case DRAIN_BOUND -> gate.drainBoundElapsed();
      case KILL_BOUND -> abandonHarness();
    }
    return settle();
  }

  /**
   * The kill's bound passed with no exit: the run stops waiting for it (HarnessStopped follows).
   */
  private void abandonHarness() {
    if (harness == null) {
      return;
    }
    harnessAbandoned = true;
    journal.warn(Code.W_RUN_046, RunFaults.abandoned());
    ctx.stop(harness);
  }

  // --- the bridge -----------------------------------------------------------------------------

  private Behavior<Command> onBridge(ToolBridgeHost.Report r) {
    if (r instanceof ToolBridgeHost.Ready ready) {
      if (gate.over() || driver != null) {
        return settle();
      }
      bridge = Optional.of(ready.bridge());
      gate.bridgeListening();
      journal.trace(RunBridge.listening(ready.bridge()));
      return launchDriver();
    } else if (r instanceof ToolBridgeHost.Failed f) {
      return decide(RunFaults.bridgeFailed(f.diagnostic()));
    } else if (r == ToolBridgeHost.Activity.INSTANCE) {
      if (gate.activityCounts()) {
        timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
      }
    } else if (r instanceof ToolBridgeHost.Call c && !gate.finished()) {
      onToolCall(c.event());
      if (c.event() instanceof ToolCallEvent.Finished f) {
        Optional<Diagnostic> limit = f.diagnostic().filter(RunFaults::passedALimit);
        if (limit.isPresent()) {
          return decide(new Ending.HarnessFailed(limit.get())); // a tool passed the run's limit
        }
      }
    }
    return Behaviors.same();
  }

  /** A bridge call started or finished: counted, traced and reported with the current turn. */
  private void onToolCall(ToolCallEvent e) {
    if (e instanceof ToolCallEvent.Started) {
      gate.callStarted();
    } else if (e instanceof ToolCallEvent.Finished f
        && f.status() != ToolCallEvent.CallStatus.REFUSED) {
      gate.callFinished(); // a refused call finishes without having started
    }
    int turn = ledger == null ? 0 : ledger.turns();
    journal.trace(BridgeAccounting.trace(e, turn));
    journal.progress(BridgeAccounting.progress(taskId, e, turn));
  }

  private Behavior<Command> onBridgeStopped() {
    bridgeHost = null;
    if (gate.bridgeGone()) {
      return decide(RunFaults.bridgeStopped());
    }
    return settle();
  }

  // --- the ending -----------------------------------------------------------------------------

  private Behavior<Command> decide(Ending e) {
    decideOnly(e);
    return settle();
  }

  /** Tells the gate; the first ending stops the ledger, is traced and closes the bridge. */
  private void decideOnly(Ending e) {
    if (gate.decide(e)) {
      if (ledger != null) {
        ledger.stop(e);
      }
      RunEnd.failure(e).ifPresent(journal::trace);
      beginEnding();
    }
  }

  /** The outcome is decided: the bridge refuses new calls ({@code E-TOOL-003}). */
  private void beginEnding() {
    if (bridgeHost != null) {
      bridgeHost.tell(ToolBridgeHost.BeginEnding.INSTANCE);
    }
  }

  /** Carries out what the gate decides, until it waits or the run finishes. */
  private Behavior<Command> settle() {
    while (true) {
      RunGate.Decision d = gate.next();
      if (d == RunGate.Wait.INSTANCE) {
        return Behaviors.same();
      } else if (d == RunGate.CloseStdin.INSTANCE) {
        harness.tell(new HarnessProcess.CloseStdin());
        timers.startSingleTimer(Tick.TERMINAL_GRACE, limits.terminalGrace());
      } else if (d instanceof RunGate.Kill k) {
        harness.tell(new HarnessProcess.Kill(k.cause()));
        if (exit == null && !timers.isTimerActive(Tick.KILL_BOUND)) {
          // Bounded until the exit; a kill after it (stdout still open) has the drain bound.
          timers.startSingleTimer(Tick.KILL_BOUND, RunFaults.KILL_BOUND);
        }
      } else if (d == RunGate.AwaitDrain.INSTANCE) {
        // The leader exited but stdout is still open (a child holds it, or lines are still in the
        // pipe): the terminal grace to end, then the group is killed (docs/run-semantics.md §9).
        timers.startSingleTimer(Tick.DRAIN_BOUND, limits.terminalGrace());
      } else if (d instanceof RunGate.Classify c) {
        driver.tell(new Driver.ClassifyExit(c.exit(), driverReplies));
      } else if (d instanceof RunGate.Fail f) {
        decideOnly(f.ending());
      } else if (d == RunGate.StopBridge.INSTANCE) {
        // The bridge goes first: the calls it kills are traced before the run's end.
        bridgeHost.tell(ToolBridgeHost.Stop.INSTANCE);
      } else if (d instanceof RunGate.Finish f) {
        finish(f.ending(), f.spawned());
        return ending();
      }
    }
  }

  private void finish(Ending e, boolean spawned) {
    timers.cancelAll();
    stopPreparation();
    Duration took = Duration.between(startedAt, services.clock().instant());
    if (spawned) {
      journal.trace(RunEnd.harnessExit(exit, e, took));
    }
    Optional<String> sessionId = RunEnd.sessionId(ledger, plannedSession);
    RunOutcome outcome = RunEnd.outcome(taskId, e, ledger, sessionId, took);
    if (harnessAbandoned) {
      outcome = RunEnd.withWarning(outcome, Code.W_RUN_046, RunFaults.abandoned());
    }
    if (ledger != null) {
      journal.trace(ledger.finish());
    }
    journal.trace(RunEnd.runEnd(outcome));
    RunLog.finished(outcome);
    journal.phase(RunPhase.FINISHED);
    start.runtime().tell(RunEnd.ended(start.request(), spawned, sessionId, outcome));
    // The clean-up starts here, so it runs while the closing child starts; the journal and the
    // clean-up go to that child: this actor writes nothing more.
    if (applying != null) {
      applying.thenAcceptAsync(RunEnd::removeFiles, blocking); // whenever it comes back
      applying = null;
    }
    CompletableFuture<Void> cleanUp = RunEnd.cleanUp(takeApplied(), journal.writer(), blocking);
    Path workRoot = limits.workRoot();
    RunRetention.Keep keep = limits.keep();
    Instant now = services.clock().instant();
    closing =
        ctx.spawn(
            RunClosing.create(
                new RunClosing.Handover(
                    outcome,
                    journal,
                    cleanUp,
                    blocking,
                    () -> RunRetention.prune(workRoot, runDir, keep, now))),
            "closing");
    ctx.watchWith(closing, ClosingStopped.INSTANCE);
  }

  /**
   * The run stopped before it could hand its journal over (its system is stopping, or it failed):
   * what it holds is cleaned now, off the actor thread.
   */
  private Behavior<Command> release() {
    if (closing == null) {
      RunEnd.cleanUp(takeApplied(), journal.writer(), blocking);
      if (applying != null) {
        applying.thenAcceptAsync(RunEnd::removeFiles, blocking);
      }
    }
    return Behaviors.same();
  }

  private AppliedLaunch takeApplied() {
    AppliedLaunch a = applied;
    applied = null;
    return a;
  }

  private void batchHandled() {
    batchesHandled(1);
  }

  /** Acknowledges the {@code n} oldest batches not yet acknowledged, oldest first. */
  private void batchesHandled(int n) {
    for (int i = 0; i < n && harness != null; i++) {
      harness.tell(new HarnessProcess.BatchHandled());
    }
  }

  private Path workdir() {
    return start.request().workdir().map(Path::of).orElse(runDir);
  }
}
