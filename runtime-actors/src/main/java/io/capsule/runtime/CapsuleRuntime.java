package io.capsule.runtime;

import io.capsule.config.diag.Code;
import io.capsule.config.manifest.Conversation;
import io.capsule.driver.api.Session;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.core.SessionPlanner;
import io.capsule.runtime.driver.DriverLoading;
import io.capsule.runtime.driver.DriverRegistry;
import io.capsule.runtime.harness.HelperCommands;
import io.capsule.runtime.hub.HubLink;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import io.capsule.runtime.run.CapsuleRun;
import io.capsule.runtime.run.RunServices;
import io.capsule.runtime.run.RunStart;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * The runtime guardian: one per {@code ActorSystem} (or per embedding actor), the entry point for
 * runs. It owns the {@link DriverRegistry}, plans harness sessions per capsule ({@link
 * SessionPlanner}), spawns one {@link CapsuleRun} per task and watches it.
 *
 * <p>Supervision: a run is spawned with {@code stop} on failure and watched; a run that stops
 * before it reported (it failed) gets its one report from here ({@code E-RUN-040}, "the run stopped
 * unexpectedly"), so every task has exactly one report and a failing run never affects another run
 * or the guardian. The registry is restarted on failure: its registrations survive, and runs
 * waiting on it are refused ({@code E-RUN-043}).
 */
public final class CapsuleRuntime extends AbstractBehavior<CapsuleRuntime.Command> {

  public sealed interface Command {}

  /**
   * Start a run; its events go to the listener and/or the hub link.
   *
   * <p>{@code listenerBatches}, when present, is the listener itself (the same actor) taking a
   * parsed batch's events as one {@code List<RunEvent>} message in order with its other events: for
   * the runtime's own relays, one message per batch instead of one per event (issue #15). A
   * listener that only speaks {@link RunEvent} leaves it empty and gets one message per event.
   */
  public record StartRun(
      RunRequest request,
      Optional<ActorRef<RunEvent>> listener,
      Optional<ActorRef<List<RunEvent>>> listenerBatches,
      Optional<ActorRef<HubLink.Command>> hub,
      Optional<ActorRef<RunStarted>> replyTo)
      implements Command, CapsuleSerializable {
    public StartRun {
      Objects.requireNonNull(request, "request");
      Objects.requireNonNull(listener, "listener");
      Objects.requireNonNull(listenerBatches, "listenerBatches");
      Objects.requireNonNull(hub, "hub");
      Objects.requireNonNull(replyTo, "replyTo");
      RunStart.sameListener(listener, listenerBatches);
    }

    /** A start whose listener (if any) gets one message per event. */
    public StartRun(
        RunRequest request,
        Optional<ActorRef<RunEvent>> listener,
        Optional<ActorRef<HubLink.Command>> hub,
        Optional<ActorRef<RunStarted>> replyTo) {
      this(request, listener, Optional.empty(), hub, replyTo);
    }
  }

  /** The run for a task exists (it may have been running already for a repeated start). */
  public record RunStarted(String taskId, ActorRef<CapsuleRun.Command> run)
      implements CapsuleSerializable {}

  /** Cancel a task's run; nothing happens for an unknown or finished task. */
  public record CancelRun(String taskId, String reason) implements Command, CapsuleSerializable {}

  /** Register an in-memory capsule (node-local: holds a driver factory). */
  public record Register(DriverRegistry.Register register) implements Command {}

  /** A run asks which session its task runs in (docs/run-semantics.md §8). */
  public record PlanSession(RunRequest request, Conversation mode, ActorRef<Session> replyTo)
      implements Command {}

  /** A run reports that it has ended (before it stops), with the session it used. */
  public record RunEnded(RunRequest request, Optional<String> sessionId, boolean sessionGone)
      implements Command, CapsuleSerializable {}

  private record RunStopped(String taskId, ActorRef<CapsuleRun.Command> run) implements Command {}

  private static final class Live {
    final ActorRef<CapsuleRun.Command> run;
    final StartRun start;
    boolean ended;

    Live(ActorRef<CapsuleRun.Command> run, StartRun start) {
      this.run = run;
      this.start = start;
    }
  }

  private final RunServices services;
  private final Map<String, Live> runs = new HashMap<>();
  private final Map<String, SessionPlanner> planners = new HashMap<>();
  private long spawned;

  /**
   * @param limits every run's limits
   * @param loading loads a folder capsule's driver (the WASM driver loader)
   * @param prober the version prober; empty for the built-in process prober
   */
  public static Behavior<Command> create(
      RunLimits limits, DriverLoading loading, Optional<VersionProber> prober) {
    return Behaviors.setup(ctx -> new CapsuleRuntime(ctx, limits, loading, prober));
  }

  private CapsuleRuntime(
      ActorContext<Command> ctx,
      RunLimits limits,
      DriverLoading loading,
      Optional<VersionProber> prober) {
    super(ctx);
    Map<String, String> hostEnv = System.getenv();
    ActorRef<DriverRegistry.Command> registry =
        ctx.spawn(
            Behaviors.supervise(
                    DriverRegistry.create(
                        loading, hostEnv, limits.driverCallTimeout(), limits.blockingDispatcher()))
                .onFailure(SupervisorStrategy.restart()),
            "drivers");
    // A probe holds a thread per stream while it reads: it runs on the growing harness I/O
    // dispatcher, never on the bounded blocking one it could starve.
    java.util.concurrent.Executor io =
        ctx.getSystem()
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig(limits.harness().ioDispatcher()));
    VersionProber p =
        prober.orElseGet(
            // Cached per binary (path, size, mtime): a run does not pay the probe each time.
            () ->
                new CachingVersionProber(
                    VersionProber.of(new HelperCommands(io, limits.versionProbeTimeout())),
                    CachingVersionProber.defaultFile(hostEnv),
                    io));
    this.services = new RunServices(registry, limits, p, java.time.Clock.systemUTC(), hostEnv);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(StartRun.class, this::onStart)
        .onMessage(CancelRun.class, this::onCancel)
        .onMessage(Register.class, r -> forwardRegister(r))
        .onMessage(PlanSession.class, this::onPlan)
        .onMessage(RunEnded.class, this::onEnded)
        .onMessage(RunStopped.class, this::onStopped)
        .build();
  }

  private Behavior<Command> forwardRegister(Register r) {
    services.registry().tell(r.register());
    return this;
  }

  private Behavior<Command> onStart(StartRun s) {
    String taskId = s.request().taskId();
    Live live = runs.get(taskId);
    if (live != null && !live.ended) {
      // The same task again (a repeated assign): the run that exists is the task's run.
      s.replyTo().ifPresent(r -> r.tell(new RunStarted(taskId, live.run)));
      return this;
    }
    RunStart start =
        new RunStart(
            s.request(), s.listener(), s.listenerBatches(), s.hub(), getContext().getSelf());
    // A run stops on failure (never restarted: it would spawn the harness twice) and is watched.
    ActorRef<CapsuleRun.Command> run =
        getContext()
            .spawn(
                Behaviors.supervise(CapsuleRun.create(start, services))
                    .onFailure(SupervisorStrategy.stop()),
                "run-" + (++spawned));
    getContext().watchWith(run, new RunStopped(taskId, run));
    runs.put(taskId, new Live(run, s));
    s.replyTo().ifPresent(r -> r.tell(new RunStarted(taskId, run)));
    return this;
  }

  private Behavior<Command> onCancel(CancelRun c) {
    Live live = runs.get(c.taskId());
    if (live != null && !live.ended) {
      live.run.tell(new CapsuleRun.Cancel(c.reason()));
    }
    return this;
  }

  private Behavior<Command> onPlan(PlanSession p) {
    SessionPlanner planner =
        planners.computeIfAbsent(
            p.request().capsule().key() + "#" + p.mode(),
            k -> new SessionPlanner(p.mode(), () -> UUID.randomUUID().toString()));
    p.replyTo().tell(planner.plan(p.request().conversation()));
    return this;
  }

  private Behavior<Command> onEnded(RunEnded e) {
    Live live = runs.get(e.request().taskId());
    if (live != null) {
      live.ended = true;
    }
    for (Map.Entry<String, SessionPlanner> entry : planners.entrySet()) {
      if (entry.getKey().startsWith(e.request().capsule().key() + "#")) {
        entry.getValue().settle(e.request().conversation(), e.sessionId(), e.sessionGone());
      }
    }
    return this;
  }

  private Behavior<Command> onStopped(RunStopped s) {
    Live live = runs.get(s.taskId());
    if (live == null || !live.run.equals(s.run())) {
      return this;
    }
    runs.remove(s.taskId());
    if (!live.ended) {
      RunOutcome outcome =
          new RunOutcome(
              s.taskId(),
              RunStatus.FAILED,
              Optional.empty(),
              0,
              UsageSplit.ZERO,
              Optional.of(Code.E_RUN_040.id()),
              Optional.of(Code.E_RUN_040.id()),
              "the run stopped unexpectedly",
              Optional.empty(),
              Duration.ZERO);
      live.start.listener().ifPresent(l -> l.tell(new RunEvent.Finished(outcome)));
      live.start.hub().ifPresent(h -> h.tell(new HubLink.SendReport(outcome)));
    }
    return this;
  }
}
