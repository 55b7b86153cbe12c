package io.capsule.runtime;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import io.capsule.runtime.bridge.ToolCallEvent;
import io.capsule.runtime.bridge.ToolWorkspace;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.core.LedgerStep;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.core.TraceWriter;
import io.capsule.runtime.core.TurnLedger;
import io.capsule.runtime.core.UsageSplits;
import io.capsule.runtime.harness.AppliedLaunch;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.harness.LaunchPlanApplier;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The supervisor of one capsule run (run-semantics §3–§9). It decides and routes; it never parses
 * and never does I/O on its own thread: the {@link Driver} child parses, the {@link HarnessProcess}
 * child owns the process group, the {@link ProtocolSession} child reports, and file work runs on
 * the blocking dispatcher. Every wait is a timer: version probe bound, inactivity window, terminal
 * grace, interrupt grace (absolute), stdout drain bound.
 *
 * <p>Endings: the first one decided wins, except a cancel, after which the outcome is canceled
 * whatever follows (a cancel after the outcome is decided changes nothing). The run reports exactly
 * once, only after the harness's group has exited (when it was spawned), then tells the runtime and
 * stops. Supervision of the children is declared where they are spawned: both the driver and the
 * harness stop on failure and are watched (driver → {@code E-RUN-034}, harness → {@code
 * E-RUN-007}).
 */
public final class CapsuleRun extends AbstractBehavior<CapsuleRun.Command> {

  public sealed interface Command {}

  /** Cancel the task: interrupt the turn by the driver's method, or spawn nothing. */
  public record Cancel(String reason) implements Command, CapsuleSerializable {}

  private record Resolved(DriverRegistry.Resolution resolution) implements Command {}

  private record Planned(Session session) implements Command {}

  private record Probed(Optional<String> version) implements Command {}

  private record Applied(AppliedLaunch launch, Throwable failure) implements Command {}

  private record FromDriver(Driver.Reply reply) implements Command {}

  private record FromHarness(HarnessProcess.Event event) implements Command {}

  private record ChildStopped(String which) implements Command {}

  private record Reported(ProtocolSession.Reported r) implements Command {}

  private record Cleaned(RunOutcome outcome) implements Command {}

  private record FromBridge(ToolBridgeHost.Report report) implements Command {}

  private enum BridgeGone implements Command {
    INSTANCE
  }

  private enum Tick implements Command {
    PROBE_BOUND,
    INACTIVITY,
    TERMINAL_GRACE,
    INTERRUPT_GRACE,
    DRAIN_BOUND
  }

  private final RunStart start;
  private final RunServices services;
  private final RunLimits limits;
  private final String taskId;
  private final TimerScheduler<Command> timers;
  private final Executor blocking;
  private final ActorRef<ProtocolSession.Command> session;
  private final ActorRef<Driver.Reply> driverReplies;
  private final Instant startedAt;
  private final Path runDir;
  private final TraceWriter trace;

  private ResolvedCapsule capsule;
  private Session plannedSession;
  private TurnLedger ledger;
  private Optional<String> harnessVersion = Optional.empty();
  private LaunchPlan plan;
  private ActorRef<Driver.Command> driver;
  private ActorRef<HarnessProcess.Command> harness;
  private AppliedLaunch applied;
  private Optional<Ending> ending = Optional.empty();
  private Optional<Ending.Canceled> canceled = Optional.empty();
  private boolean parsing;
  private boolean classifying;
  private boolean stdoutEnded;
  private boolean drainElapsed;
  private boolean killSent;
  private boolean graceStarted;
  private HarnessProcess.Exited exited;
  private boolean finished;
  private Optional<Diagnostic> stdinFailure = Optional.empty();
  private boolean applying;
  private boolean reported;
  private ActorRef<ToolBridgeHost.Command> bridgeHost;
  private Optional<Bridge> bridge = Optional.empty();
  private boolean bridgeStopping;
  private int bridgeCallsInFlight;

  public static Behavior<Command> create(RunStart start, RunServices services) {
    return Behaviors.setup(
        ctx -> Behaviors.withTimers(timers -> new CapsuleRun(ctx, timers, start, services)));
  }

  private CapsuleRun(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunStart start,
      RunServices services) {
    super(ctx);
    this.start = start;
    this.services = services;
    this.limits = services.limits();
    this.taskId = start.request().taskId();
    this.timers = timers;
    this.blocking =
        ctx.getSystem()
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig(limits.blockingDispatcher()));
    this.startedAt = services.clock().instant();
    this.runDir = limits.workRoot().resolve(RunDirs.name(taskId, startedAt));
    this.trace = RunDirs.openTrace(runDir, services);
    this.driverReplies = ctx.messageAdapter(Driver.Reply.class, FromDriver::new);
    // ProtocolSession: restarted on failure; it holds no buffer of its own (the hub link's
    // sequencing machine does), so a restart loses nothing.
    this.session =
        ctx.spawn(
            Behaviors.supervise(
                    ProtocolSession.create(taskId, start.listener(), start.hub(), ctx.getSelf()))
                .onFailure(org.apache.pekko.actor.typed.SupervisorStrategy.restart()),
            "session");
    trace.write(
        TraceRecord.of("run_start")
            .with("task_id", taskId)
            .with("capsule", start.request().capsule().key()));
    progress(new RunEvent.StateChanged(taskId, RunPhase.ACCEPTED));
    services
        .registry()
        .tell(
            new DriverRegistry.Resolve(
                start.request().capsule(),
                ctx.messageAdapter(DriverRegistry.Resolution.class, Resolved::new)));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Cancel.class, this::onCancel)
        .onMessage(Resolved.class, this::onResolved)
        .onMessage(Planned.class, this::onPlanned)
        .onMessage(Probed.class, this::onProbed)
        .onMessage(Applied.class, this::onApplied)
        .onMessage(FromDriver.class, this::onDriver)
        .onMessage(FromHarness.class, this::onHarness)
        .onMessage(ChildStopped.class, this::onChildStopped)
        .onMessage(Tick.class, this::onTick)
        .onMessage(Reported.class, r -> onReported())
        .onMessage(Cleaned.class, this::onCleaned)
        .onMessage(FromBridge.class, this::onBridge)
        .onMessageEquals(BridgeGone.INSTANCE, this::onBridgeGone)
        .onSignal(PostStop.class, s -> release())
        .build();
  }

  // --- before the harness -------------------------------------------------------------------

  private Behavior<Command> onResolved(Resolved r) {
    if (r.resolution() instanceof DriverRegistry.Refused refused) {
      return decide(new Ending.Blocked(refused.diagnostic()));
    }
    if (finished || canceled.isPresent()) {
      return this;
    }
    capsule = ((DriverRegistry.Ready) r.resolution()).capsule();
    start
        .runtime()
        .tell(
            new CapsuleRuntime.PlanSession(
                start.request(),
                capsule.manifest().lifecycle().conversation(),
                getContext().messageAdapter(Session.class, Planned::new)));
    return this;
  }

  private Behavior<Command> onPlanned(Planned p) {
    if (finished || canceled.isPresent()) {
      return this;
    }
    plannedSession = p.session();
    var inference = capsule.manifest().inference();
    ledger =
        new TurnLedger(
            taskId,
            tighter(inference.maxTurns(), start.request().maxTurns()),
            tighter(inference.maxSessionTokens(), start.request().maxTokens()),
            plannedSession.mode() == SessionMode.RESUME);
    capsule.manifest().warnings().forEach(d -> warn(d.code(), d.message()));
    progress(new RunEvent.StateChanged(taskId, RunPhase.STARTING));
    timers.startSingleTimer(Tick.PROBE_BOUND, limits.versionProbeTimeout());
    getContext()
        .pipeToSelf(
            services
                .prober()
                .probe(
                    capsule.binary(),
                    capsule.description().versionArgs(),
                    RunDirs.grantedEnv(capsule, services.hostEnv()),
                    workdir()),
            (v, e) -> new Probed(e == null ? v : Optional.empty()));
    return this;
  }

  private Behavior<Command> onProbed(Probed p) {
    if (capsule == null
        || driver != null
        || bridgeHost != null
        || finished
        || canceled.isPresent()) {
      return this;
    }
    timers.cancel(Tick.PROBE_BOUND);
    harnessVersion = p.version();
    boolean tested =
        harnessVersion
            .map(v -> VersionProber.tested(v, capsule.description().testedVersions()))
            .orElse(false);
    if (!tested) {
      warn(
          Code.W_RUN_002,
          harnessVersion
              .map(v -> "harness version '" + v + "' is not a tested version")
              .orElse("harness version unreadable"));
    }
    ToolNarrowing tools =
        ToolNarrowing.of(
            capsule.manifest().capabilities().shell().allow(), start.request().allowedTools());
    start
        .request()
        .allowedTools()
        .ifPresent(
            allowed ->
                trace.write(
                    TraceRecord.of("tool_narrowing")
                        .with("allowed", allowed)
                        .with("offered", tools.offered())));
    if (!tools.unknown().isEmpty()) {
      warn(
          Code.W_TOOL_010,
          "invocation.allowed_tools names "
              + String.join(", ", tools.unknown())
              + ", not a tool of this capsule; ignored");
    }
    if (!tools.offered().isEmpty()) {
      startBridge(tools.offered()); // launch follows when it is listening
      return this;
    }
    return launchDriver();
  }

  private Behavior<Command> launchDriver() {
    // The driver: stops on any failure and is watched; never restarted (its instance holds what
    // launch was told, which a fresh instance would not know).
    driver =
        getContext()
            .spawn(
                Driver.create(
                    capsule.drivers(), limits.driverCallTimeout(), limits.blockingDispatcher()),
                "driver");
    getContext().watchWith(driver, new ChildStopped("driver"));
    driver.tell(new Driver.Launch(launchRequest(), driverReplies));
    return this;
  }

  private LaunchRequest launchRequest() {
    var m = capsule.manifest();
    Optional<String> model =
        start
            .request()
            .model()
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .or(() -> m.inference().model());
    return new LaunchRequest(
        model,
        m.inference().systemPrompt().orElse(""),
        m.inference().driver().configJson(),
        bridge,
        plannedSession,
        harnessVersion,
        start.request().task());
  }

  private Behavior<Command> onLaunched(LaunchResult result) {
    if (result instanceof LaunchResult.Refused refused) {
      return decide(
          new Ending.DriverFailed(
              Diagnostic.of(Code.E_RUN_034, "failed in launch: " + refused.message())
                  .with("function", "launch")));
    }
    plan = ((LaunchResult.Planned) result).plan();
    Path binary = capsule.binary();
    Path wd = workdir();
    List<String> allow = capsule.manifest().capabilities().env().granted();
    var host = services.hostEnv();
    LaunchPlan p = plan;
    applying = true;
    CompletableFuture<AppliedLaunch> work =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                Files.createDirectories(runDir);
                return LaunchPlanApplier.apply(p, binary, wd, runDir, allow, host);
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            },
            blocking);
    getContext().pipeToSelf(work, (a, e) -> new Applied(a, RunDirs.unwrap(e)));
    return this;
  }

  private Behavior<Command> onApplied(Applied a) {
    applying = false;
    if (a.failure() != null) {
      Diagnostic d =
          a.failure() instanceof DiagnosticException de
              ? de.diagnostic()
              : Diagnostic.of(
                  Code.E_RUN_007, "could not prepare the harness: " + a.failure().getMessage());
      return decide(
          d.code() == Code.E_RUN_034 ? new Ending.DriverFailed(d) : new Ending.HarnessFailed(d));
    }
    applied = a.launch();
    if (finished || ending.isPresent() || canceled.isPresent()) {
      // A cancel (or a failure) arrived while the plan was being applied: spawn nothing.
      return reported ? stopRun() : finishIfReady();
    }
    trace.write(
        TraceWriter.harnessStart(
            capsule.driverName(),
            capsule.description().harness(),
            capsule.binary().toString(),
            harnessVersion,
            harnessVersion
                .map(v -> VersionProber.tested(v, capsule.description().testedVersions()))
                .orElse(false),
            plannedSession,
            plan,
            List.copyOf(applied.env().keySet())));
    // The harness: stops on failure (a restart would spawn the harness again) and is watched.
    harness =
        getContext()
            .spawn(
                HarnessProcess.create(
                    applied,
                    getContext().messageAdapter(HarnessProcess.Event.class, FromHarness::new),
                    limits.harness()),
                "harness");
    getContext().watchWith(harness, new ChildStopped("harness"));
    progress(new RunEvent.StateChanged(taskId, RunPhase.RUNNING));
    timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
    return this;
  }

  // --- the harness ----------------------------------------------------------------------------

  private Behavior<Command> onHarness(FromHarness m) {
    HarnessProcess.Event e = m.event();
    if (e instanceof HarnessProcess.Lines lines) {
      if (classifying || finished || drainElapsed) {
        // Output after the run stopped waiting for it: not parsed, only noted.
        trace.write(
            TraceRecord.of("harness_note")
                .with("note", "stdout lines after the end ignored")
                .with("lines", lines.lines().size()));
        if (harness != null) {
          harness.tell(new HarnessProcess.BatchHandled());
        }
        return this;
      }
      timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
      parsing = true;
      driverTell(new Driver.Parse(lines.lines(), driverReplies));
    } else if (e instanceof HarnessProcess.LineCut cut) {
      trace.write(TraceRecord.of("harness_note").with("note", cut.note()));
    } else if (e instanceof HarnessProcess.StdoutEnded) {
      stdoutEnded = true;
      startTerminalGrace();
    } else if (e instanceof HarnessProcess.InterruptResult ir) {
      onInterruptResult(ir.delivered());
    } else if (e instanceof HarnessProcess.Exited x) {
      exited = x;
      timers.cancel(Tick.INACTIVITY);
      timers.cancel(Tick.TERMINAL_GRACE);
      timers.cancel(Tick.INTERRUPT_GRACE);
      if (!stdoutEnded) {
        // The leader exited but stdout is still open (a child holds it, or lines are still in
        // the pipe): give it the terminal grace to end, then kill the group (run-semantics §9).
        timers.startSingleTimer(Tick.DRAIN_BOUND, limits.terminalGrace());
      }
    } else if (e instanceof HarnessProcess.SpawnFailed sf) {
      harness = null;
      return decide(new Ending.HarnessFailed(sf.diagnostic()));
    } else if (e instanceof HarnessProcess.StdinFailed sf) {
      // A harness that closed its stdin may still finish its turn: a terminal event wins; only an
      // exit without one is "could not be fed" (E-RUN-007) instead of being classified.
      stdinFailure = Optional.of(sf.diagnostic());
      trace.write(TraceRecord.of("harness_note").with("note", sf.diagnostic().message()));
    }
    return finishIfReady();
  }

  private void onInterruptResult(boolean delivered) {
    trace.write(
        TraceRecord.of("harness_interrupt")
            .with("method", capsule.description().interrupt().witName())
            .with("delivered", delivered)
            .with("grace_ms", delivered ? limits.interruptGrace().toMillis() : 0));
    if (delivered) {
      // Absolute: output during the grace does not extend it.
      timers.startSingleTimer(Tick.INTERRUPT_GRACE, limits.interruptGrace());
      progress(
          new RunEvent.Note(
              taskId,
              "interrupt delivered; the harness has "
                  + limits.interruptGrace().toMillis()
                  + " ms to end"));
    } else {
      kill("interrupt not delivered");
    }
  }

  // --- the driver -----------------------------------------------------------------------------

  private Behavior<Command> onDriver(FromDriver m) {
    Driver.Reply r = m.reply();
    if (r instanceof Driver.Launched l) {
      if (finished || ending.isPresent() || canceled.isPresent()) {
        return finishIfReady();
      }
      return onLaunched(l.result());
    } else if (r instanceof Driver.Parsed p) {
      parsing = false;
      apply(p.events());
      if (harness != null) {
        harness.tell(new HarnessProcess.BatchHandled());
      }
    } else if (r instanceof Driver.Classified c) {
      classifying = false;
      if (c.event().isTerminal()) {
        apply(List.of(c.event()));
      } else {
        decide(
            new Ending.DriverFailed(
                Diagnostic.of(
                        Code.E_RUN_034, "failed in classify-exit: returned " + c.event().witName())
                    .with("function", "classify-exit")));
      }
    } else if (r instanceof Driver.Failed f) {
      if (parsing) {
        ackBatch(); // the batch is not parsed, but the harness's output must keep draining
      }
      parsing = false;
      classifying = false;
      driver = null;
      return decide(new Ending.DriverFailed(f.diagnostic()));
    }
    return finishIfReady();
  }

  private void apply(List<Event> events) {
    LedgerStep step = ledger.apply(events, services.clock().instant());
    trace.writeAll(step.trace());
    step.progress().forEach(this::progress);
    step.ending().ifPresent(this::decide);
  }

  // --- endings --------------------------------------------------------------------------------

  private Behavior<Command> onCancel(Cancel c) {
    if (finished || canceled.isPresent() || ending.isPresent()) {
      return this; // a cancel after the outcome is decided changes nothing
    }
    canceled = Optional.of(new Ending.Canceled(c.reason()));
    bridgeTell(ToolBridgeHost.BeginEnding.INSTANCE);
    if (harness == null) {
      // Before the spawn: spawn nothing; the run ends canceled at once (after an apply in flight).
      return finishIfReady();
    }
    progress(new RunEvent.StateChanged(taskId, RunPhase.INTERRUPTING));
    InterruptMethod method = capsule.description().interrupt();
    if (method == InterruptMethod.UNSUPPORTED) {
      onInterruptResult(false);
    } else {
      harness.tell(new HarnessProcess.Interrupt(method, plan.interruptStdin()));
    }
    return this;
  }

  private Behavior<Command> onTick(Tick t) {
    switch (t) {
      case PROBE_BOUND -> {
        return onProbed(new Probed(Optional.empty()));
      }
      case INACTIVITY -> {
        if (bridgeCallsInFlight > 0) {
          // The harness is waiting on its own tool call (bounded by the bridge's call timeout).
          timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
          return this;
        }
        return decide(new Ending.Inactive(limits.inactivityTimeout().toMillis()));
      }
      case TERMINAL_GRACE -> kill("terminal grace elapsed");
      case INTERRUPT_GRACE -> kill("interrupt grace elapsed");
      case DRAIN_BOUND -> {
        if (!killSent && harness != null) {
          killSent = true;
          harness.tell(new HarnessProcess.Kill("stdout still open after the harness exited"));
          timers.startSingleTimer(Tick.DRAIN_BOUND, limits.terminalGrace());
          return this;
        }
        // Killed and still no end of stdout: report rather than wait forever.
        drainElapsed = true;
        return finishIfReady();
      }
    }
    return this;
  }

  private Behavior<Command> decide(Ending e) {
    if (ending.isEmpty()) {
      ending = Optional.of(e);
      bridgeTell(ToolBridgeHost.BeginEnding.INSTANCE);
      if (ledger != null) {
        ledger.stop(e);
      }
      if (!(e instanceof Ending.Completed) && !(e instanceof Ending.TurnFailed)) {
        trace.write(
            TraceRecord.of("harness_failed")
                .with("kind", e.cause())
                .with("message", e.toString())
                .with("source", "runtime"));
      }
      if (e.killAtOnce()) {
        kill(e.cause());
      } else {
        startTerminalGrace();
      }
    }
    return finishIfReady();
  }

  /** Terminal event or EOF: close stdin and give the harness the terminal grace. */
  private void startTerminalGrace() {
    if (harness != null && exited == null && !graceStarted && !killSent) {
      graceStarted = true;
      harness.tell(new HarnessProcess.CloseStdin());
      timers.startSingleTimer(Tick.TERMINAL_GRACE, limits.terminalGrace());
    }
  }

  private void kill(String cause) {
    if (harness != null && exited == null && !killSent) {
      killSent = true;
      harness.tell(new HarnessProcess.Kill(cause));
    }
  }

  private Behavior<Command> onChildStopped(ChildStopped s) {
    if (s.which().equals("driver")) {
      driver = null;
      if (!finished && !classifying && !parsing) {
        return finishIfReady();
      }
      if (parsing) {
        ackBatch();
      }
      parsing = false;
      classifying = false;
      return decide(
          new Ending.DriverFailed(
              Diagnostic.of(Code.E_RUN_034, "the driver stopped unexpectedly")));
    }
    boolean wasRunning = harness != null && exited == null;
    harness = null;
    if (wasRunning) {
      // Its PostStop killed the group; it will not report an exit now.
      exited = new HarnessProcess.Exited(Optional.empty(), Optional.empty(), "", true);
      stdoutEnded = true;
      return decide(
          new Ending.HarnessFailed(Diagnostic.of(Code.E_RUN_007, "the harness actor failed")));
    }
    return finishIfReady();
  }

  private Behavior<Command> finishIfReady() {
    if (finished || parsing || classifying) {
      return this;
    }
    boolean spawned = harness != null || exited != null;
    if (spawned && (exited == null || !(stdoutEnded || drainElapsed))) {
      return this; // the group must be gone before the report
    }
    Optional<Ending> decided = canceled.map(Ending.class::cast).or(() -> ending);
    if (spawned && ledger.ending().isEmpty() && stdinFailure.isPresent() && canceled.isEmpty()) {
      return decide(new Ending.HarnessFailed(stdinFailure.get()));
    } else if (spawned && ledger.ending().isEmpty() && driver != null) {
      // EOF without a terminal event: the driver classifies the exit.
      classifying = true;
      driverTell(
          new Driver.ClassifyExit(
              new ExitStatus(
                  exited.code(), exited.signal(), exited.stderrTail(), canceled.isPresent(), false),
              driverReplies));
      return this;
    }
    if (decided.isEmpty()) {
      if (spawned) {
        decided =
            Optional.of(
                new Ending.DriverFailed(
                    Diagnostic.of(Code.E_RUN_034, "the run ended with no outcome")));
      } else {
        return this; // still starting
      }
    }
    if (bridgeHost != null) {
      // The bridge goes first: calls it kills are traced before the run's end (see onBridgeGone).
      if (!bridgeStopping) {
        bridgeStopping = true;
        bridgeHost.tell(ToolBridgeHost.Stop.INSTANCE);
      }
      return this;
    }
    return finish(decided.get(), spawned);
  }

  private Behavior<Command> finish(Ending e, boolean spawned) {
    if (finished) {
      return this;
    }
    finished = true;
    timers.cancelAll();
    Duration took = Duration.between(startedAt, services.clock().instant());
    if (spawned) {
      trace.write(
          TraceRecord.of("harness_exit")
              .with("code", exited.code().orElse(null))
              .with("signal", exited.signal().orElse(null))
              .with("cause", e.cause())
              .with("killed", exited.killedByRuntime())
              .with("duration_ms", took.toMillis()));
    }
    Optional<String> sessionId =
        ledger == null
            ? Optional.empty()
            : ledger.reportedSessionId().or(() -> Optional.of(plannedSession.id()));
    RunOutcome outcome =
        Outcomes.of(
            taskId,
            e,
            ledger == null ? 0 : ledger.turns(),
            ledger == null
                ? io.capsule.protocol.frame.UsageSplit.ZERO
                : UsageSplits.of(ledger.usage()),
            sessionId,
            took);
    if (ledger != null) {
      trace.writeAll(ledger.finish());
    }
    trace.write(
        TraceRecord.of("run_end")
            .with("outcome", outcome.status().wire())
            .with("code", outcome.code().orElse(null)));
    progress(new RunEvent.StateChanged(taskId, RunPhase.FINISHED));
    start
        .runtime()
        .tell(
            new CapsuleRuntime.RunEnded(
                start.request(),
                spawned ? sessionId : Optional.empty(),
                outcome.code().filter(Code.E_RUN_036.id()::equals).isPresent()));
    // The files directory goes before the report, so whoever reads the report finds it gone.
    AppliedLaunch a = applied;
    applied = null;
    getContext()
        .pipeToSelf(
            CompletableFuture.runAsync(
                () -> {
                  closeQuietly(a);
                  trace.close(); // complete on disk before anyone reads the report
                },
                blocking),
            (v, err) -> new Cleaned(outcome));
    return this;
  }

  private Behavior<Command> onCleaned(Cleaned c) {
    session.tell(
        new ProtocolSession.Finish(
            c.outcome(),
            getContext().messageAdapter(ProtocolSession.Reported.class, Reported::new)));
    return this;
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

  private Behavior<Command> onReported() {
    reported = true;
    // A plan still being applied would leave its files directory behind: wait for it.
    return applying ? this : stopRun();
  }

  private Behavior<Command> stopRun() {
    return Behaviors.stopped();
  }

  private Behavior<Command> release() {
    AppliedLaunch a = applied;
    applied = null;
    TraceWriter t = trace;
    // File work off the actor thread: remove the files directory, close the trace.
    CompletableFuture.runAsync(
        () -> {
          closeQuietly(a);
          t.close();
        },
        blocking);
    return this;
  }

  // --- the tool bridge (issue 8: started before launch, stopped before the report) -----------

  /**
   * @param offered the capsule's tools after the request's narrowing ({@link ToolNarrowing}): the
   *     bridge's whole inventory, so {@code tools/list} shows only these, a call to any other is
   *     refused as an unknown tool ({@code E-TOOL-002}), and the launch request names only these
   */
  private void startBridge(List<String> offered) {
    Path wd = workdir();
    var grantedEnv = RunDirs.grantedEnv(capsule, services.hostEnv());
    var caps = capsule.manifest().capabilities();
    bridgeHost =
        getContext()
            .spawn(
                ToolBridgeHost.create(
                    limits.bridge(),
                    new ToolWorkspace(
                        wd.toAbsolutePath(), grantedEnv, caps.filesystem().readOnly()),
                    offered,
                    blocking,
                    getContext().messageAdapter(ToolBridgeHost.Report.class, FromBridge::new)),
                "bridge");
    getContext().watchWith(bridgeHost, BridgeGone.INSTANCE);
  }

  private Behavior<Command> onBridge(FromBridge m) {
    ToolBridgeHost.Report r = m.report();
    if (r instanceof ToolBridgeHost.Ready ready) {
      if (finished || ending.isPresent() || canceled.isPresent() || driver != null) {
        return finishIfReady();
      }
      bridge = Optional.of(ready.bridge());
      trace.write(
          TraceRecord.of("tool_bridge")
              .with("url", ready.bridge().url())
              .with("tools", ready.bridge().toolNames()));
      return launchDriver();
    } else if (r instanceof ToolBridgeHost.Failed f) {
      // A tool that does not resolve is the capsule's fault on this node: blocked. A bridge that
      // cannot bind on loopback is this node's trouble: failed.
      return decide(
          f.diagnostic().code() == Code.E_TOOL_001
              ? new Ending.Blocked(f.diagnostic())
              : new Ending.HarnessFailed(f.diagnostic()));
    } else if (r == ToolBridgeHost.Activity.INSTANCE) {
      if (harness != null && exited == null && !finished && !classifying && !drainElapsed) {
        timers.startSingleTimer(Tick.INACTIVITY, limits.inactivityTimeout());
      }
    } else if (r instanceof ToolBridgeHost.Call c && !finished) {
      onBridgeCall(c.event());
    }
    return this;
  }

  private void onBridgeCall(ToolCallEvent e) {
    if (e instanceof ToolCallEvent.Started) {
      bridgeCallsInFlight++;
    } else if (e instanceof ToolCallEvent.Finished f
        && f.status() != ToolCallEvent.CallStatus.REFUSED) {
      bridgeCallsInFlight = Math.max(0, bridgeCallsInFlight - 1);
    }
    int turn = ledger == null ? 0 : ledger.turns();
    trace.writeAll(BridgeAccounting.trace(e, turn));
    progress(BridgeAccounting.progress(taskId, e, turn));
  }

  private Behavior<Command> onBridgeGone() {
    boolean expected = bridgeStopping;
    bridgeHost = null;
    bridgeStopping = false;
    bridgeCallsInFlight = 0;
    if (!expected && !finished && ending.isEmpty() && canceled.isEmpty() && bridge.isPresent()) {
      // The host stopped on its own while the harness may still call it: the run cannot keep its
      // contract with the harness.
      return decide(
          new Ending.HarnessFailed(
              Diagnostic.of(Code.E_TOOL_009, "the tool bridge stopped unexpectedly")));
    }
    return finishIfReady();
  }

  private void bridgeTell(ToolBridgeHost.Command c) {
    if (bridgeHost != null) {
      bridgeHost.tell(c);
    }
  }

  // --- helpers --------------------------------------------------------------------------------

  private void driverTell(Driver.Command c) {
    if (driver != null) {
      driver.tell(c);
    } else {
      // No driver any more (it failed): lines are dropped, and acknowledged so the harness's
      // output keeps draining to its end.
      if (c instanceof Driver.Parse) {
        ackBatch();
      }
      parsing = false;
      classifying = false;
    }
  }

  private void ackBatch() {
    if (harness != null) {
      harness.tell(new HarnessProcess.BatchHandled());
    }
  }

  private void progress(RunEvent e) {
    session.tell(new ProtocolSession.Progress(e));
  }

  private void warn(Code code, String message) {
    trace.write(TraceRecord.of("harness_warning").with("code", code.id()).with("message", message));
    progress(new RunEvent.Warning(taskId, code.id(), message));
  }

  private Path workdir() {
    return start.request().workdir().map(Path::of).orElse(runDir);
  }

  private static OptionalLong tighter(OptionalLong manifest, OptionalLong budget) {
    if (manifest.isEmpty()) {
      return budget;
    }
    if (budget.isEmpty()) {
      return manifest;
    }
    return OptionalLong.of(Math.min(manifest.getAsLong(), budget.getAsLong()));
  }
}
