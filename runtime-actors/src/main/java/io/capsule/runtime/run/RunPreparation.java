package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.Session;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.driver.DriverRegistry;
import io.capsule.runtime.driver.ResolvedCapsule;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The first steps of a run, before anything is spawned (docs/run-semantics.md §3): resolve the
 * capsule through the shared {@link DriverRegistry}, plan the session with the runtime guardian
 * (which keeps the conversation keys), probe the harness's version. It gathers facts and owns the
 * bounds on them; it spawns nothing and touches no file.
 *
 * <p>The probe needs only the resolved capsule, so it starts with the session plan, not after it:
 * the plan's round trip to the guardian and the probe (a cached answer, or a process) overlap
 * instead of adding up on the way to the harness's spawn.
 *
 * <p>It tells its parent, in this order: {@link Ready} (the run can say {@code STARTING}), then
 * {@link Versioned}; or {@link Refused} at any point before. The parent stops it after the last of
 * these, or when the run ends first: it never stops itself, so a stop the parent watches always
 * means a failure.
 */
final class RunPreparation {

  sealed interface Command {}

  private record Resolved(DriverRegistry.Resolution resolution) implements Command {}

  private record Planned(Session session) implements Command {}

  private record Probed(Optional<String> version) implements Command {}

  private enum Tick implements Command {
    RESOLVE_BOUND,
    PROBE_BOUND
  }

  /** What the parent hears. */
  sealed interface Report {}

  /** The capsule is resolved and the session planned. */
  record Ready(ResolvedCapsule capsule, Session session) implements Report {}

  /** The harness's version, or empty when unreadable or not answered within its bound. */
  record Versioned(Optional<String> version) implements Report {}

  /** The run cannot start: blocked with this ending. */
  record Refused(Ending ending) implements Report {}

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final RunRequest request;
  private final RunServices services;
  private final ActorRef<CapsuleRuntime.Command> runtime;
  private final Path workdir;
  private final ActorRef<Report> parent;
  private ResolvedCapsule capsule;
  private Optional<String> version; // null until the probe answered or its bound passed
  private boolean planned;

  /**
   * @param workdir where the version probe runs (the run's working directory)
   */
  static Behavior<Command> create(
      RunRequest request,
      RunServices services,
      ActorRef<CapsuleRuntime.Command> runtime,
      Path workdir,
      ActorRef<Report> parent) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new RunPreparation(ctx, timers, request, services, runtime, workdir, parent)
                        .resolving()));
  }

  private RunPreparation(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunRequest request,
      RunServices services,
      ActorRef<CapsuleRuntime.Command> runtime,
      Path workdir,
      ActorRef<Report> parent) {
    this.ctx = ctx;
    this.timers = timers;
    this.request = request;
    this.services = services;
    this.runtime = runtime;
    this.workdir = workdir;
    this.parent = parent;
  }

  /**
   * The registry answers within its load deadline; twice that bounds the resolve and the session
   * plan even if an answer is lost (a registry restarted mid-resolution, say).
   */
  private Duration resolveBound() {
    return services.limits().driverCallTimeout().multipliedBy(2);
  }

  /** Until the capsule is resolved and the session planned. */
  private Behavior<Command> resolving() {
    timers.startSingleTimer(Tick.RESOLVE_BOUND, resolveBound());
    services
        .registry()
        .tell(
            new DriverRegistry.Resolve(
                request.capsule(),
                ctx.messageAdapter(DriverRegistry.Resolution.class, Resolved::new)));
    return Behaviors.receive(Command.class)
        .onMessage(Resolved.class, this::onResolved)
        .onMessageEquals(Tick.RESOLVE_BOUND, this::onResolveBound)
        .build();
  }

  private Behavior<Command> onResolved(Resolved r) {
    if (r.resolution() instanceof DriverRegistry.Refused refused) {
      return refuse(new Ending.Blocked(refused.diagnostic()));
    }
    capsule = ((DriverRegistry.Ready) r.resolution()).capsule();
    runtime.tell(
        new CapsuleRuntime.PlanSession(
            request,
            capsule.manifest().lifecycle().conversation(),
            ctx.messageAdapter(Session.class, Planned::new)));
    startProbe();
    return Behaviors.receive(Command.class)
        .onMessage(Planned.class, this::onPlanned)
        .onMessageEquals(Tick.RESOLVE_BOUND, this::onResolveBound)
        .onMessage(Probed.class, p -> onVersion(p.version()))
        .onMessageEquals(Tick.PROBE_BOUND, () -> onVersion(Optional.empty()))
        .build();
  }

  private Behavior<Command> onPlanned(Planned p) {
    timers.cancel(Tick.RESOLVE_BOUND);
    planned = true;
    parent.tell(new Ready(capsule, p.session()));
    return version == null ? Behaviors.same() : versioned(version);
  }

  private Behavior<Command> onResolveBound() {
    return refuse(
        new Ending.Blocked(
            Diagnostic.of(
                Code.E_RUN_043,
                "the capsule was not resolved within " + resolveBound().toMillis() + " ms")));
  }

  private Behavior<Command> refuse(Ending e) {
    timers.cancelAll();
    parent.tell(new Refused(e));
    return Behaviors.ignore(); // until the parent stops it
  }

  /**
   * The probe and its bound (then the run goes on without a version); what comes first is kept, and
   * told after {@link Ready}.
   */
  private void startProbe() {
    timers.startSingleTimer(Tick.PROBE_BOUND, services.limits().versionProbeTimeout());
    ctx.pipeToSelf(
        services
            .prober()
            .probe(
                capsule.binary(),
                capsule.description().versionArgs(),
                RunDirs.grantedEnv(capsule, services.hostEnv()),
                workdir),
        (v, e) -> new Probed(e == null ? v : Optional.empty()));
  }

  /** The first answer counts: a probe answering after its bound is too late, and vice versa. */
  private Behavior<Command> onVersion(Optional<String> v) {
    if (version != null) {
      return Behaviors.same();
    }
    version = v;
    timers.cancel(Tick.PROBE_BOUND);
    return planned ? versioned(version) : Behaviors.same();
  }

  private Behavior<Command> versioned(Optional<String> known) {
    timers.cancelAll();
    parent.tell(new Versioned(known));
    return Behaviors.ignore(); // a probe answering after its bound is too late
  }
}
