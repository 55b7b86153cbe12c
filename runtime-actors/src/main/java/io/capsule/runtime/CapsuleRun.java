package io.capsule.runtime;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.Session;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.core.TraceWriter;
import io.capsule.runtime.core.TurnLedger;
import io.capsule.runtime.harness.AppliedLaunch;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The supervisor of one capsule run (docs/run-semantics.md §3–§9). It decides and routes; it never
 * parses and never does I/O on its own thread: the {@link Driver} child parses, the {@link
 * HarnessProcess} child owns the process group, the {@link ProtocolSession} child reports, and file
 * work runs on the blocking dispatcher. Every wait is a timer: version probe bound, inactivity
 * window, terminal grace, interrupt grace (absolute), stdout drain bound.
 *
 * <p>This class is the run's start (resolve the capsule, plan the session, probe the version, start
 * the bridge, launch, apply the plan, spawn the harness) and the routing of every message. The rest
 * is done by collaborators confined to this actor: {@link RunTurn} (the turn once the harness
 * runs), {@link RunEnding} (endings, the order of the end, the report), and the views of the
 * children ({@link RunDriver}, {@link RunHarness}, {@link RunBridge}); {@link RunLaunch}, {@link
 * RunEnd} and {@link ToolNarrowing} are pure.
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

  /**
   * The run's timers. Only the run receives them; package-private because its collaborators ({@link
   * RunTurn}, {@link RunHarness}) start and cancel them on its {@link TimerScheduler}.
   */
  enum Tick implements Command {
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
  private final Path runDir;
  private final RunJournal journal;
  private final RunDriver driver;
  private final RunHarness harness;
  private final RunBridge bridge = new RunBridge();
  private final RunEnding ending;
  private final RunTurn turn;

  private ResolvedCapsule capsule;
  private Session plannedSession;
  private Optional<String> harnessVersion = Optional.empty();
  private LaunchPlan plan;
  private boolean applying;
  private boolean reported;

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
    Instant startedAt = services.clock().instant();
    this.runDir = limits.workRoot().resolve(RunDirs.name(taskId, startedAt));
    TraceWriter trace = RunDirs.openTrace(runDir, services);
    // ProtocolSession: restarted on failure; it holds no buffer of its own (the hub link's
    // sequencing machine does), so a restart loses nothing.
    ActorRef<ProtocolSession.Command> session =
        ctx.spawn(
            Behaviors.supervise(
                    ProtocolSession.create(taskId, start.listener(), start.hub(), ctx.getSelf()))
                .onFailure(SupervisorStrategy.restart()),
            "session");
    this.journal = new RunJournal(taskId, trace, session);
    this.driver = new RunDriver(ctx.messageAdapter(Driver.Reply.class, FromDriver::new));
    this.harness = new RunHarness(timers, limits);
    this.ending =
        new RunEnding(
            start,
            journal,
            harness,
            driver,
            bridge,
            timers,
            services.clock(),
            startedAt,
            blocking,
            (cleanup, outcome) -> ctx.pipeToSelf(cleanup, (v, err) -> new Cleaned(outcome)));
    this.turn =
        new RunTurn(journal, harness, driver, bridge, ending, timers, limits, services.clock());
    journal.trace(
        TraceRecord.of("run_start")
            .with("task_id", taskId)
            .with("capsule", start.request().capsule().key()));
    journal.progress(new RunEvent.StateChanged(taskId, RunPhase.ACCEPTED));
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
        .onMessage(FromHarness.class, m -> then(() -> turn.onHarness(m.event())))
        .onMessage(ChildStopped.class, this::onChildStopped)
        .onMessage(Tick.class, this::onTick)
        .onMessage(Reported.class, r -> onReported())
        .onMessage(Cleaned.class, this::onCleaned)
        .onMessage(FromBridge.class, this::onBridge)
        .onMessageEquals(BridgeGone.INSTANCE, () -> then(ending::bridgeGone))
        .onSignal(PostStop.class, s -> then(ending::release))
        .build();
  }

  /** Runs a step of a collaborator; the run's behaviour stays the same. */
  private Behavior<Command> then(Runnable step) {
    step.run();
    return this;
  }

  // --- the start ------------------------------------------------------------------------------

  private Behavior<Command> onResolved(Resolved r) {
    if (r.resolution() instanceof DriverRegistry.Refused refused) {
      return then(() -> ending.decide(new Ending.Blocked(refused.diagnostic())));
    }
    if (ending.finished() || ending.canceled()) {
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
    if (ending.finished() || ending.canceled()) {
      return this;
    }
    plannedSession = p.session();
    TurnLedger ledger = RunLaunch.ledger(taskId, capsule, start.request(), plannedSession);
    ending.planned(ledger, plannedSession);
    turn.planned(ledger, capsule.description().interrupt());
    capsule.manifest().warnings().forEach(d -> journal.warn(d.code(), d.message()));
    journal.progress(new RunEvent.StateChanged(taskId, RunPhase.STARTING));
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
        || driver.present()
        || bridge.hosted()
        || ending.finished()
        || ending.canceled()) {
      return this;
    }
    timers.cancel(Tick.PROBE_BOUND);
    harnessVersion = p.version();
    RunLaunch.untested(capsule, harnessVersion).ifPresent(m -> journal.warn(Code.W_RUN_002, m));
    ToolNarrowing tools = ToolNarrowing.forRun(capsule, start.request(), journal);
    if (tools.offered().isEmpty()) {
      return launchDriver();
    }
    // The bridge's host: stops on failure and is watched; launch follows when it is listening.
    ActorRef<ToolBridgeHost.Command> host =
        getContext()
            .spawn(
                RunBridge.host(
                    limits,
                    capsule,
                    services.hostEnv(),
                    workdir(),
                    tools.offered(),
                    blocking,
                    getContext().messageAdapter(ToolBridgeHost.Report.class, FromBridge::new)),
                "bridge");
    getContext().watchWith(host, BridgeGone.INSTANCE);
    bridge.spawned(host);
    return this;
  }

  private Behavior<Command> launchDriver() {
    // The driver: stops on any failure and is watched; never restarted (its instance holds what
    // launch was told, which a fresh instance would not know).
    ActorRef<Driver.Command> child =
        getContext()
            .spawn(
                Driver.create(
                    capsule.drivers(), limits.driverCallTimeout(), limits.blockingDispatcher()),
                "driver");
    getContext().watchWith(child, new ChildStopped("driver"));
    driver.spawned(child);
    driver.launch(
        RunLaunch.request(
            capsule, start.request(), bridge.bridge(), plannedSession, harnessVersion));
    return this;
  }

  private Behavior<Command> onDriver(FromDriver m) {
    if (!(m.reply() instanceof Driver.Launched launched)) {
      return then(() -> turn.onDriver(m.reply()));
    }
    if (ending.over()) {
      return then(ending::settle);
    }
    if (launched.result() instanceof LaunchResult.Refused refused) {
      return then(() -> ending.decide(RunLaunch.refused(refused)));
    }
    plan = ((LaunchResult.Planned) launched.result()).plan();
    applying = true;
    getContext()
        .pipeToSelf(
            RunLaunch.apply(plan, capsule, workdir(), runDir, services.hostEnv(), blocking),
            (a, e) -> new Applied(a, RunDirs.unwrap(e)));
    return this;
  }

  private Behavior<Command> onApplied(Applied a) {
    applying = false;
    if (reported) {
      // Canceled while the plan was being applied, and reported since: the run only waited for
      // this, so a files directory it made is removed on stop. (An apply that failed then must
      // stop the run too, or the run would wait forever.)
      ending.applied(a.launch());
      return Behaviors.stopped();
    }
    if (a.failure() != null) {
      return then(() -> ending.decide(RunLaunch.notApplied(a.failure())));
    }
    ending.applied(a.launch());
    if (ending.over()) {
      // A cancel (or a failure) arrived while the plan was being applied: spawn nothing.
      return then(ending::settle);
    }
    journal.trace(
        RunLaunch.harnessStart(capsule, harnessVersion, plannedSession, plan, a.launch()));
    // The harness: stops on failure (a restart would spawn the harness again) and is watched.
    ActorRef<HarnessProcess.Command> child =
        getContext()
            .spawn(
                HarnessProcess.create(
                    a.launch(),
                    getContext().messageAdapter(HarnessProcess.Event.class, FromHarness::new),
                    limits.harness()),
                "harness");
    getContext().watchWith(child, new ChildStopped("harness"));
    harness.spawned(child);
    journal.progress(new RunEvent.StateChanged(taskId, RunPhase.RUNNING));
    turn.started(plan.interruptStdin());
    return this;
  }

  // --- children, timers, the bridge -----------------------------------------------------------

  private Behavior<Command> onCancel(Cancel c) {
    return then(() -> turn.cancel(c.reason()));
  }

  private Behavior<Command> onTick(Tick t) {
    if (t == Tick.PROBE_BOUND) {
      return onProbed(new Probed(Optional.empty()));
    }
    return then(() -> turn.onTick(t));
  }

  private Behavior<Command> onChildStopped(ChildStopped s) {
    return then(s.which().equals("driver") ? turn::driverStopped : turn::harnessStopped);
  }

  private Behavior<Command> onBridge(FromBridge m) {
    ToolBridgeHost.Report r = m.report();
    if (r instanceof ToolBridgeHost.Ready ready) {
      if (ending.over() || driver.present()) {
        return then(ending::settle);
      }
      bridge.onReady(ready.bridge());
      journal.trace(
          TraceRecord.of("tool_bridge")
              .with("url", ready.bridge().url())
              .with("tools", ready.bridge().toolNames()));
      return launchDriver();
    } else if (r instanceof ToolBridgeHost.Failed f) {
      return then(() -> ending.bridgeFailed(f.diagnostic()));
    } else if (r == ToolBridgeHost.Activity.INSTANCE) {
      turn.bridgeActivity();
    } else if (r instanceof ToolBridgeHost.Call c && !ending.finished()) {
      turn.onToolCall(c.event());
    }
    return this;
  }

  // --- the report -----------------------------------------------------------------------------

  private Behavior<Command> onCleaned(Cleaned c) {
    journal.report(
        c.outcome(), getContext().messageAdapter(ProtocolSession.Reported.class, Reported::new));
    return this;
  }

  private Behavior<Command> onReported() {
    reported = true;
    // A plan still being applied would leave its files directory behind: wait for it.
    return applying ? this : Behaviors.stopped();
  }

  private Path workdir() {
    return start.request().workdir().map(Path::of).orElse(runDir);
  }
}
