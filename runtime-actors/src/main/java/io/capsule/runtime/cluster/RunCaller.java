package io.capsule.runtime.cluster;

import io.capsule.config.diag.Code;
import io.capsule.runtime.CapsuleSerializable;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * The caller's side of one sharded run, on the node that started it (any node): sends the start to
 * the task's entity, repeats it until a runner node answers ({@link Hosted}) and then seals its
 * starts ({@link RunEntity.Sealed}), watches the entity that hosts the run, and hands every event
 * to {@code downstream}. It guarantees the caller exactly one {@link RunEvent.Finished}:
 *
 * <ul>
 *   <li>the run's own outcome, when its entity delivers it;
 *   <li>{@code E-CLU-001} when the hosting node is lost (the watched entity stops, or tells {@link
 *       Lost} on hand-off) before the outcome and no retry is left, or the task was canceled;
 *   <li>with retries left ({@link RunRequest#retryOnNodeLoss}), a {@link RunEvent.AttemptLost}
 *       instead, and the start again as the next attempt (events of older attempts are dropped);
 *   <li>{@code E-CLU-003} when no runner node answers within {@code startTimeout};
 *   <li>{@code E-CLU-004} when events were lost on the way: the entity numbers what it sends each
 *       caller ({@code seq}, from 0 per caller and attempt), and a gap (Artery drops a message when
 *       its outbound queue is full, and says so only as a dead letter) ends the run for the caller
 *       and cancels it, rather than a {@link RunEvent.Finished} that looks complete. The outcome,
 *       the last message, would leave no gap behind it: the entity sends it again until this caller
 *       confirms it ({@link RunEntity.Settled}).
 * </ul>
 *
 * <p>Events of a parsed batch cross as one {@link Events} message (cut by count and size), single
 * ones as {@link Event}, one too large for a message in {@link Part}s. A text or thinking delta
 * from another node comes without the text so far it repeats, and is handed on with it ({@link
 * SoFar}).
 *
 * <p>Pekko delivers a remote entity's messages before its death notice, so an outcome sent just
 * before the entity passivated is never mistaken for a loss.
 */
public final class RunCaller {

  public sealed interface Command {}

  /** The entity of attempt {@code attempt} lives on {@code node}. */
  public record Hosted(int attempt, ActorRef<RunEntity.Command> entity, String node)
      implements Command, CapsuleSerializable {}

  /**
   * An event of attempt {@code attempt}, the {@code seq}-th message of that attempt to this caller;
   * its variant travels by name ({@link RunEventByName}).
   */
  public record Event(int attempt, long seq, @RunEventByName RunEvent event)
      implements Command, CapsuleSerializable {}

  /**
   * A parsed batch's events of attempt {@code attempt}, in order, as one message: the {@code
   * seq}-th message of that attempt to this caller. Its elements travel as {@link Event}'s do.
   */
  public record Events(int attempt, long seq, @RunEventByName List<RunEvent> events)
      implements Command, CapsuleSerializable {
    public Events {
      events = List.copyOf(events);
    }
  }

  /**
   * A piece of one event too large for one message (see {@link CrossingSize}): the {@code seq}-th
   * message of attempt {@code attempt} to this caller. The pieces of one event are consecutive;
   * together they are an {@link Event}'s bytes as {@code serializer} with {@code manifest} wrote
   * them, and the {@code last} completes it.
   */
  public record Part(
      int attempt, long seq, int serializer, String manifest, byte[] bytes, boolean last)
      implements Command, CapsuleSerializable {
    public Part {
      Objects.requireNonNull(manifest, "manifest");
      Objects.requireNonNull(bytes, "bytes");
    }

    /** By content, the bytes too (a record compares arrays by identity). */
    @Override
    public boolean equals(Object o) {
      return o instanceof Part p
          && attempt == p.attempt
          && seq == p.seq
          && serializer == p.serializer
          && last == p.last
          && manifest.equals(p.manifest)
          && Arrays.equals(bytes, p.bytes);
    }

    @Override
    public int hashCode() {
      return Objects.hash(attempt, seq, serializer, manifest, last) * 31 + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
      return "Part[attempt="
          + attempt
          + ", seq="
          + seq
          + ", "
          + bytes.length
          + " bytes, last="
          + last
          + "]";
    }
  }

  /** Attempt {@code attempt} was lost: its node left the cluster (hand-off) before it ended. */
  public record Lost(int attempt, String node, String reason)
      implements Command, CapsuleSerializable {}

  /** The run was canceled (from any node): a later node loss is not retried. */
  public record CancelSeen(int attempt) implements Command, CapsuleSerializable {}

  /** The handle's cancel, on this node. */
  public record CancelRequested(String reason) implements Command {}

  private record EntityStopped(int attempt, String node) implements Command {}

  private record Resend() implements Command {}

  private record StartTimedOut() implements Command {}

  private static final Object RESEND = "resend";
  private static final Object START_TIMEOUT = "start-timeout";

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final RunRequest request;
  private final EntityRef<RunEntity.Command> entity;
  private final ActorRef<RunEvent> downstream;
  private final Duration startTimeout;
  private final Duration resend;
  private final long bornNanos = System.nanoTime();
  private int attempt = 1;
  private long nextSeq; // of the current attempt's messages from its entity
  private final ByteArrayOutputStream assembled = new ByteArrayOutputStream(); // an event's parts
  private SoFar soFar = new SoFar(); // the current attempt's deltas' text so far

  /**
   * The most bytes one event may take between nodes (in {@link Part}s): far above any event a
   * harness line makes (a line is cut at 8 MiB), bounding what a caller buffers.
   */
  static final int MAX_EVENT_BYTES = 64 * 1024 * 1024;

  private int retriesLeft;
  private boolean canceled;
  private Optional<ActorRef<RunEntity.Command>> watched = Optional.empty();

  /**
   * @param entity the task's entity ({@code entityRefFor(TYPE_KEY, taskId)})
   * @param downstream gets every event, {@link RunEvent.Finished} last and once
   * @param startTimeout how long a start may go unanswered by any runner node
   * @param resend how often an unanswered start is sent again
   */
  public static Behavior<Command> create(
      RunRequest request,
      EntityRef<RunEntity.Command> entity,
      ActorRef<RunEvent> downstream,
      Duration startTimeout,
      Duration resend) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new RunCaller(ctx, timers, request, entity, downstream, startTimeout, resend)
                        .behavior()));
  }

  private RunCaller(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunRequest request,
      EntityRef<RunEntity.Command> entity,
      ActorRef<RunEvent> downstream,
      Duration startTimeout,
      Duration resend) {
    this.ctx = ctx;
    this.timers = timers;
    this.request = Objects.requireNonNull(request, "request");
    this.entity = entity;
    this.downstream = downstream;
    this.startTimeout = startTimeout;
    this.resend = resend;
    this.retriesLeft = request.nodeLossRetries();
    sendStart();
  }

  private Behavior<Command> behavior() {
    return Behaviors.receive(Command.class)
        .onMessage(Hosted.class, this::onHosted)
        .onMessage(Event.class, this::onEvent)
        .onMessage(Events.class, this::onEvents)
        .onMessage(Part.class, this::onPart)
        .onMessage(Lost.class, l -> l.attempt() == attempt ? lost(l.node(), l.reason()) : same())
        .onMessage(
            EntityStopped.class,
            s ->
                s.attempt() == attempt
                    ? lost(s.node(), "the node " + s.node() + " hosting the run left the cluster")
                    : same())
        .onMessage(
            CancelSeen.class,
            c -> {
              canceled = true;
              return same();
            })
        .onMessage(
            CancelRequested.class,
            c -> {
              canceled = true;
              entity.tell(new RunEntity.Cancel(c.reason()));
              return same();
            })
        .onMessage(
            Resend.class,
            r -> {
              entity.tell(new RunEntity.Start(request, attempt, ctx.getSelf()));
              return same();
            })
        .onMessage(StartTimedOut.class, t -> onStartTimedOut())
        .build();
  }

  private Behavior<Command> onHosted(Hosted h) {
    if (h.attempt() != attempt) {
      return same();
    }
    if (timers.isTimerActive(RESEND)) {
      // The first answer of this attempt: no more starts. The seal follows them on the same way,
      // so the entity knows none is still on its way when it passivates.
      timers.cancel(RESEND);
      timers.cancel(START_TIMEOUT);
      entity.tell(new RunEntity.Sealed(attempt, ctx.getSelf()));
    }
    if (watched.filter(h.entity()::equals).isEmpty()) {
      watched.ifPresent(ctx::unwatch);
      ctx.watchWith(h.entity(), new EntityStopped(attempt, h.node()));
      watched = Optional.of(h.entity());
    }
    return same();
  }

  private Behavior<Command> onEvent(Event e) {
    if (e.attempt() != attempt) {
      return same(); // a lost attempt's straggler: that attempt has been marked and closed
    }
    if (e.seq() != nextSeq) {
      return eventsLost(e.seq());
    }
    nextSeq++;
    downstream.tell(soFar.restore(e.event()));
    if (e.event() instanceof RunEvent.Finished) {
      settled();
      return Behaviors.stopped();
    }
    return same();
  }

  private Behavior<Command> onEvents(Events e) {
    if (e.attempt() != attempt) {
      return same();
    }
    if (e.seq() != nextSeq) {
      return eventsLost(e.seq());
    }
    nextSeq++;
    for (RunEvent event : e.events()) {
      downstream.tell(soFar.restore(event));
      if (event instanceof RunEvent.Finished) {
        settled();
        return Behaviors.stopped();
      }
    }
    return same();
  }

  private Behavior<Command> onPart(Part p) {
    if (p.attempt() != attempt) {
      return same();
    }
    if (p.seq() != nextSeq) {
      return eventsLost(p.seq());
    }
    nextSeq++;
    if (assembled.size() + (long) p.bytes().length > MAX_EVENT_BYTES) {
      return failWithCancel(
          "an event of the run (attempt "
              + attempt
              + ") is larger than the "
              + MAX_EVENT_BYTES
              + " bytes one event may take between nodes; the run was canceled");
    }
    assembled.writeBytes(p.bytes());
    if (!p.last()) {
      return same();
    }
    Object whole =
        SerializationExtension.get(Adapter.toClassic(ctx.getSystem()))
            .deserialize(assembled.toByteArray(), p.serializer(), p.manifest())
            .get();
    assembled.reset();
    RunEvent event = ((Event) whole).event();
    downstream.tell(soFar.restore(event));
    if (event instanceof RunEvent.Finished) {
      settled();
      return Behaviors.stopped();
    }
    return same();
  }

  /**
   * Messages {@code nextSeq} to {@code seq - 1} of this attempt never came: the run's events are
   * incomplete, so its outcome would mislead. Cancel it (nobody gets its events) and fail.
   */
  private Behavior<Command> eventsLost(long seq) {
    return failWithCancel(
        "messages "
            + nextSeq
            + " to "
            + (seq - 1)
            + " of the run's events (attempt "
            + attempt
            + ") were lost between the runner node and this node; the run was canceled");
  }

  /** The caller cannot have every event: cancel the run (nobody gets its events) and fail. */
  private Behavior<Command> failWithCancel(String message) {
    entity.tell(new RunEntity.Cancel("its events were lost on the way to its caller"));
    settled();
    watched.ifPresent(ctx::unwatch);
    return finish(ClusterOutcomes.failed(request.taskId(), Code.E_CLU_004, message, took()));
  }

  /**
   * Tells the entity this caller has its outcome, so it stops sending it again ({@link
   * RunEntity.Settled}); to the entity's own ref, so a late one never makes a new incarnation.
   */
  private void settled() {
    watched.ifPresent(e -> e.tell(new RunEntity.Settled(attempt, ctx.getSelf())));
  }

  private Behavior<Command> lost(String node, String reason) {
    watched.ifPresent(ctx::unwatch);
    watched = Optional.empty();
    String message = reason + " (attempt " + attempt + ")";
    if (canceled || retriesLeft == 0) {
      return finish(ClusterOutcomes.failed(request.taskId(), Code.E_CLU_001, message, took()));
    }
    downstream.tell(
        new RunEvent.AttemptLost(request.taskId(), attempt, node, Code.E_CLU_001.id(), message));
    attempt++;
    nextSeq = 0;
    assembled.reset();
    soFar = new SoFar();
    retriesLeft--;
    sendStart();
    return same();
  }

  private Behavior<Command> onStartTimedOut() {
    // The start may still be buffered somewhere: make sure it never runs unwatched.
    entity.tell(new RunEntity.Cancel("no runner node answered in time"));
    return finish(
        ClusterOutcomes.failed(
            request.taskId(),
            Code.E_CLU_003,
            "no runner node answered the start within " + startTimeout,
            took()));
  }

  private void sendStart() {
    entity.tell(new RunEntity.Start(request, attempt, ctx.getSelf()));
    timers.startTimerWithFixedDelay(RESEND, new Resend(), resend);
    timers.startSingleTimer(START_TIMEOUT, new StartTimedOut(), startTimeout);
  }

  private Behavior<Command> finish(RunOutcome outcome) {
    downstream.tell(new RunEvent.Finished(outcome));
    return Behaviors.stopped();
  }

  private Duration took() {
    return Duration.ofNanos(System.nanoTime() - bornNanos);
  }

  private static Behavior<Command> same() {
    return Behaviors.same();
  }
}
