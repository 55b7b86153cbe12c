package io.capsule.runtime.cluster;

import io.capsule.config.diag.Code;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.CapsuleSerializable;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * One task's run as a sharded entity (entity id = task id), hosted only on runner nodes: a thin
 * owner of the {@code CapsuleRun} that this node's runtime spawns. It tells each caller where it
 * lives ({@link RunCaller.Hosted}, so the caller watches it and learns of node loss), takes a run
 * slot from {@link NodeSlots}, starts the run, passes every event on, and passivates once the
 * outcome is delivered (and confirmed: {@link Settled}) and every caller has {@link Sealed} its
 * starts.
 *
 * <p>Events cross to a caller as one message per parsed batch ({@link RunCaller.Events}, from the
 * run's {@code listenerBatches}) or per single event ({@link RunCaller.Event}), numbered per caller
 * and attempt from 0, so the caller notices a message Artery dropped (a full outbound queue) and
 * fails the run with {@code E-CLU-004} instead of delivering an outcome with events missing.
 *
 * <p>Phases: {@code idle} (no start yet) → {@code waiting} (for a slot) → {@code running} → {@code
 * done} (outcome known, passivating); {@code leaving} when its node hands the shard off mid-run.
 *
 * <p>A start is idempotent by task id: while this entity lives, a repeated start (a resend, or a
 * second caller) never spawns a second run; the caller is added and told where the run is, and a
 * caller arriving after the outcome gets the outcome. Sharding keeps one entity per id in the
 * cluster, so one task has one run. The entity passivates only after each caller's {@link Sealed}
 * (it sends no more starts), so a caller's repeated start still on its way never outlives the
 * entity and starts the task again; a caller that never seals (its node died) is waited for at most
 * the linger. (After passivation a new start, by a new caller, is a new run.)
 *
 * <p>Automatic passivation is off for this entity type: the only stop message it gets is for its
 * own passivation (in {@code done}/{@code idle}) or the hand-off of a leaving node (mid-run), when
 * it cancels the run, waits for it to end (bounded), tells the callers the attempt was lost, and
 * stops.
 */
public final class RunEntity {

  public static final EntityTypeKey<Command> TYPE_KEY =
      EntityTypeKey.create(Command.class, "capsule-run");

  public sealed interface Command {}

  /** Start the task's run (idempotent); attempt numbers the caller's tries, from 1. */
  public record Start(RunRequest request, int attempt, ActorRef<RunCaller.Command> caller)
      implements Command, CapsuleSerializable {
    public Start {
      Objects.requireNonNull(request, "request");
      Objects.requireNonNull(caller, "caller");
    }
  }

  /** Cancel the task: the run is interrupted, or never started; the outcome is canceled. */
  public record Cancel(String reason) implements Command, CapsuleSerializable {}

  /**
   * {@code caller} sends no more starts of {@code attempt}: it was told where the run lives and
   * stopped repeating. Sent the same way as its starts, so it arrives after every one of them; the
   * entity passivates only once each caller has sealed (or after the linger), so a repeated start
   * still on its way never finds the task gone and runs it again.
   */
  public record Sealed(int attempt, ActorRef<RunCaller.Command> caller)
      implements Command, CapsuleSerializable {
    public Sealed {
      Objects.requireNonNull(caller, "caller");
    }
  }

  /**
   * {@code caller} has the outcome of {@code attempt} (or gave up on the run): the entity stops
   * sending it again ({@link Callers} says why it does) and may passivate. Sent to the entity's own
   * ref, not through sharding, so it never makes a new incarnation.
   */
  public record Settled(int attempt, ActorRef<RunCaller.Command> caller)
      implements Command, CapsuleSerializable {
    public Settled {
      Objects.requireNonNull(caller, "caller");
    }
  }

  /** Sharding's stop message (passivation and hand-off): node-local, sent by the shard. */
  private record Stop() implements Command {}

  private record FromRun(RunEvent event) implements Command {}

  private record FromRunBatch(List<RunEvent> events) implements Command {}

  private record FromSlots(NodeSlots.Reply reply) implements Command {}

  private record HandOffElapsed() implements Command {}

  private record LingerElapsed() implements Command {}

  private record ResendOutcomes() implements Command {}

  private static final Object SEAL_WAIT = "seal-wait";
  private static final Object OUTCOME_RESEND = "outcome-resend";

  /** How often an outcome no caller confirmed yet is sent again (until the linger ends). */
  static final Duration RESEND_OUTCOME_EVERY = Duration.ofSeconds(1);

  /** The message sharding must use to stop this entity ({@code Entity.withStopMessage}). */
  public static Command stopMessage() {
    return new Stop();
  }

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final ActorRef<ClusterSharding.ShardCommand> shard;
  private final HostServices host;
  private final String taskId;
  private final long bornNanos = System.nanoTime();
  private final Callers callers;

  private boolean passivating;
  private RunRequest request;
  private Optional<RunOutcome> outcome = Optional.empty();

  public static Behavior<Command> create(
      String taskId, ActorRef<ClusterSharding.ShardCommand> shard, HostServices host) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(timers -> new RunEntity(ctx, timers, shard, host, taskId).idle()));
  }

  private RunEntity(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      ActorRef<ClusterSharding.ShardCommand> shard,
      HostServices host,
      String taskId) {
    this.ctx = ctx;
    this.timers = timers;
    this.callers = new Callers(SerializationExtension.get(Adapter.toClassic(ctx.getSystem())));
    this.shard = shard;
    this.host = host;
    this.taskId = taskId;
  }

  // --- phases ---

  private Behavior<Command> idle() {
    return Behaviors.receive(Command.class)
        .onMessage(
            Start.class,
            s ->
                // Passivating: the caller repeats its start until answered, and the repeat finds
                // the next incarnation (a run started here would be stopped at once).
                passivating ? Behaviors.same() : onFirstStart(s))
        .onMessage(
            Cancel.class,
            c -> {
              // A cancel before any start (from another node, or a caller giving up): keep the
              // answer for a start still on its way, then go.
              timers.startSingleTimer(new LingerElapsed(), host.linger());
              return finish(ClusterOutcomes.canceled(taskId, c.reason(), took()), false);
            })
        .onMessage(
            Sealed.class,
            s -> {
              // Only a seal, no start: this incarnation was made by a seal that reached the shard
              // while the previous one was passivating. Nothing to keep.
              passivate();
              return Behaviors.same();
            })
        .onMessage(Stop.class, s -> Behaviors.stopped())
        .build();
  }

  private Behavior<Command> onFirstStart(Start s) {
    request = s.request();
    join(s);
    ActorRef<NodeSlots.Reply> replies = ctx.messageAdapter(NodeSlots.Reply.class, FromSlots::new);
    host.slots().tell(new NodeSlots.Acquire(taskId, ctx.getSelf(), replies));
    return waiting();
  }

  private Behavior<Command> waiting() {
    return Behaviors.receive(Command.class)
        .onMessage(Start.class, this::onLaterStart)
        .onMessage(Sealed.class, this::onSealed)
        .onMessage(FromSlots.class, this::onSlots)
        .onMessage(
            Cancel.class,
            c -> {
              host.slots().tell(new NodeSlots.Release(ctx.getSelf()));
              return finish(ClusterOutcomes.canceled(taskId, c.reason(), took()), true);
            })
        .onMessage(
            Stop.class,
            s -> {
              host.slots().tell(new NodeSlots.Release(ctx.getSelf()));
              tellLost("the node left the cluster before the run got a slot");
              return Behaviors.stopped();
            })
        .build();
  }

  private Behavior<Command> onSlots(FromSlots f) {
    if (f.reply() instanceof NodeSlots.Refused r) {
      return finish(ClusterOutcomes.failed(taskId, Code.E_CLU_002, r.message(), took()), true);
    }
    ActorRef<RunEvent> events = ctx.messageAdapter(RunEvent.class, FromRun::new);
    // The same adapter ref (an actor has one), so batches and single events keep their order.
    @SuppressWarnings("unchecked")
    ActorRef<List<RunEvent>> batches =
        (ActorRef<List<RunEvent>>)
            (ActorRef<?>) ctx.messageAdapter(List.class, l -> new FromRunBatch((List<RunEvent>) l));
    host.runtime()
        .tell(
            new CapsuleRuntime.StartRun(
                request,
                Optional.of(events),
                Optional.of(batches),
                Optional.empty(),
                Optional.empty()));
    return running();
  }

  private Behavior<Command> running() {
    return Behaviors.receive(Command.class)
        .onMessage(Start.class, this::onLaterStart)
        .onMessage(Sealed.class, this::onSealed)
        .onMessage(Settled.class, this::onSettled)
        .onMessage(
            FromRun.class,
            f -> {
              if (f.event() instanceof RunEvent.Finished done) {
                host.slots().tell(new NodeSlots.Release(ctx.getSelf()));
                return finish(done.outcome(), true);
              }
              publish(f.event());
              return Behaviors.same();
            })
        .onMessage(FromRunBatch.class, this::publishAll)
        .onMessage(
            Cancel.class,
            c -> {
              host.runtime().tell(new CapsuleRuntime.CancelRun(taskId, c.reason()));
              callers.cancelSeen();
              return Behaviors.same();
            })
        .onMessage(
            Stop.class,
            s -> {
              // Hand-off: this node is leaving. The harness cannot move; end it here first so the
              // task never runs on two nodes at once, then tell the callers.
              host.runtime()
                  .tell(new CapsuleRuntime.CancelRun(taskId, "the node is leaving the cluster"));
              timers.startSingleTimer(new HandOffElapsed(), host.handOffTimeout());
              return leaving();
            })
        .build();
  }

  private Behavior<Command> leaving() {
    return Behaviors.receive(Command.class)
        .onMessage(
            FromRun.class,
            f -> {
              if (f.event() instanceof RunEvent.Finished) {
                return lostAndStop("the node left the cluster; the run there was stopped");
              }
              publish(f.event()); // the lost attempt's events are kept; the caller marks them
              return Behaviors.same();
            })
        .onMessage(FromRunBatch.class, this::publishAll)
        .onMessage(
            HandOffElapsed.class,
            e ->
                lostAndStop(
                    "the node left the cluster; its run did not end within "
                        + host.handOffTimeout()))
        .onMessage(
            Start.class,
            s -> {
              s.caller().tell(new RunCaller.Lost(s.attempt(), host.node(), "the node is leaving"));
              return Behaviors.same();
            })
        .build();
  }

  private Behavior<Command> done() {
    return Behaviors.receive(Command.class)
        .onMessage(
            Start.class,
            s -> {
              join(s);
              callers.tellOutcome(s.caller(), outcome.orElseThrow());
              resendUntilSettled();
              return Behaviors.same();
            })
        .onMessage(Sealed.class, this::onSealed)
        .onMessage(Settled.class, this::onSettled)
        .onMessage(
            ResendOutcomes.class,
            r -> {
              callers.resendOutcomes();
              return Behaviors.same();
            })
        .onMessage(Cancel.class, c -> Behaviors.same())
        .onMessage(FromRun.class, f -> Behaviors.same())
        .onMessage(FromRunBatch.class, f -> Behaviors.same())
        .onMessage(FromSlots.class, f -> Behaviors.same())
        .onMessage(
            LingerElapsed.class,
            e -> {
              passivate();
              return Behaviors.same();
            })
        .onMessage(Stop.class, s -> Behaviors.stopped())
        .build();
  }

  // --- helpers ---

  private Behavior<Command> onLaterStart(Start s) {
    join(s);
    return Behaviors.same();
  }

  /** Adds the caller (or its newer attempt) and tells it where the run lives. */
  private void join(Start s) {
    callers.join(s.caller(), s.attempt());
    s.caller().tell(new RunCaller.Hosted(s.attempt(), ctx.getSelf(), host.node()));
  }

  private Behavior<Command> onSealed(Sealed s) {
    callers.seal(s.caller());
    passivateIfQuiet();
    return Behaviors.same();
  }

  private Behavior<Command> onSettled(Settled s) {
    callers.settle(s.caller(), s.attempt());
    if (!callers.anyUnsettled()) {
      timers.cancel(OUTCOME_RESEND);
    }
    passivateIfQuiet();
    return Behaviors.same();
  }

  /** The outcome is delivered and confirmed, and no start of any caller is on its way. */
  private void passivateIfQuiet() {
    if (outcome.isPresent() && callers.quiet() && timers.isTimerActive(SEAL_WAIT)) {
      passivate();
    }
  }

  private void resendUntilSettled() {
    if (callers.anyUnsettled() && !timers.isTimerActive(OUTCOME_RESEND)) {
      timers.startTimerWithFixedDelay(OUTCOME_RESEND, new ResendOutcomes(), RESEND_OUTCOME_EVERY);
    }
  }

  private void publish(RunEvent e) {
    callers.publish(e);
  }

  /**
   * Most events in one {@link RunCaller.Events}: a batch (up to {@code batchMaxLines}, 256) is cut
   * at this many events or {@link CrossingSize#MESSAGE_CHARS} characters, whichever comes first, so
   * that one message stays well under Artery's frame (256 KiB by default), which drops a larger
   * one; an event larger than that alone crosses in parts.
   */
  static final int MAX_EVENTS_PER_MESSAGE = 64;

  private Behavior<Command> publishAll(FromRunBatch b) {
    callers.publishAll(b.events(), MAX_EVENTS_PER_MESSAGE);
    return Behaviors.same();
  }

  /**
   * The outcome is known: deliver it, then passivate once every caller has sealed (bounded by the
   * linger, for a caller that died before it could), or only after the linger (a cancel before any
   * start keeps its answer for a start still on its way).
   */
  private Behavior<Command> finish(RunOutcome o, boolean passivateWhenSealed) {
    outcome = Optional.of(o);
    callers.publishOutcome(o);
    resendUntilSettled();
    if (passivateWhenSealed) {
      if (callers.quiet()) {
        passivate();
      } else {
        timers.startSingleTimer(SEAL_WAIT, new LingerElapsed(), host.linger());
      }
    }
    return done();
  }

  private void passivate() {
    timers.cancel(SEAL_WAIT);
    timers.cancel(OUTCOME_RESEND);
    if (!passivating) {
      passivating = true;
      shard.tell(new ClusterSharding.Passivate<>(ctx.getSelf()));
    }
  }

  private Behavior<Command> lostAndStop(String why) {
    host.slots().tell(new NodeSlots.Release(ctx.getSelf()));
    tellLost(why);
    return Behaviors.stopped();
  }

  private void tellLost(String why) {
    callers.lost(host.node(), why);
  }

  private Duration took() {
    return Duration.ofNanos(System.nanoTime() - bornNanos);
  }
}
