package io.capsule.runtime.cluster;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The run slots of this node ({@code capsule.run.max-concurrent}): a run's entity acquires one
 * before it starts the run and releases it after the outcome. A start beyond the limit waits, in
 * arrival order, at most {@code slotWait} and behind at most {@code queueMax} others; then it is
 * refused ({@code E-CLU-002}). A node never hosts more runs than its slots. Node-local: nothing
 * here crosses nodes. The decisions are {@link SlotBook}'s; this actor adds the wait timers and
 * watches each owner, so an entity that stops without releasing (it failed) frees its slot.
 */
public final class NodeSlots {

  public sealed interface Command {}

  /** {@code owner} (a run's entity) asks for a slot; the answer goes to {@code replyTo}. */
  public record Acquire(String taskId, ActorRef<?> owner, ActorRef<Reply> replyTo)
      implements Command {}

  /** {@code owner} gives its slot back, or stops waiting for one. */
  public record Release(ActorRef<?> owner) implements Command {}

  /**
   * How many slots are held now, how many starts wait, the most ever held at once, and how many
   * runs were ever granted a slot on this node.
   */
  public record GetStats(ActorRef<Stats> replyTo) implements Command {}

  public record Stats(int capacity, int held, int waiting, int peak, long granted) {}

  public sealed interface Reply {}

  public record Granted(String taskId) implements Reply {}

  public record Refused(String taskId, String message) implements Reply {}

  private record WaitElapsed(ActorRef<?> owner) implements Command {}

  private record OwnerStopped(ActorRef<?> owner) implements Command {}

  private record Waiter(String taskId, ActorRef<Reply> replyTo) {}

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final SlotBook<ActorRef<?>> book;
  private final int capacity;
  private final Duration slotWait;
  private final Map<ActorRef<?>, Waiter> owners = new HashMap<>();

  public static Behavior<Command> create(int capacity, int queueMax, Duration slotWait) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new NodeSlots(ctx, timers, capacity, queueMax, slotWait).behavior()));
  }

  private NodeSlots(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      int capacity,
      int queueMax,
      Duration slotWait) {
    this.ctx = ctx;
    this.timers = timers;
    this.book = new SlotBook<>(capacity, queueMax);
    this.capacity = capacity;
    this.slotWait = slotWait;
  }

  private Behavior<Command> behavior() {
    return Behaviors.receive(Command.class)
        .onMessage(Acquire.class, this::onAcquire)
        .onMessage(Release.class, r -> free(r.owner()))
        .onMessage(WaitElapsed.class, this::onWaitElapsed)
        .onMessage(OwnerStopped.class, s -> free(s.owner()))
        .onMessage(
            GetStats.class,
            g -> {
              g.replyTo()
                  .tell(
                      new Stats(
                          capacity,
                          book.held(),
                          book.waitingCount(),
                          book.peak(),
                          book.grantedTotal()));
              return Behaviors.same();
            })
        .build();
  }

  private Behavior<Command> onAcquire(Acquire a) {
    boolean known = owners.containsKey(a.owner());
    switch (book.acquire(a.owner())) {
      case GRANTED -> a.replyTo().tell(new Granted(a.taskId()));
      case QUEUED -> timers.startSingleTimer(a.owner(), new WaitElapsed(a.owner()), slotWait);
      case REFUSED -> {
        a.replyTo()
            .tell(
                new Refused(
                    a.taskId(),
                    "this node runs "
                        + capacity
                        + " runs and "
                        + book.waitingCount()
                        + " starts already wait for a slot"));
        return Behaviors.same();
      }
    }
    owners.put(a.owner(), new Waiter(a.taskId(), a.replyTo()));
    if (!known) {
      ctx.watchWith(a.owner(), new OwnerStopped(a.owner()));
    }
    return Behaviors.same();
  }

  private Behavior<Command> onWaitElapsed(WaitElapsed w) {
    if (!book.waits(w.owner())) {
      return Behaviors.same(); // granted meanwhile
    }
    book.withdraw(w.owner());
    Waiter waiter = forget(w.owner());
    if (waiter != null) {
      waiter
          .replyTo()
          .tell(
              new Refused(
                  waiter.taskId(),
                  "no run slot of this node's " + capacity + " freed within " + slotWait));
    }
    return Behaviors.same();
  }

  private Behavior<Command> free(ActorRef<?> owner) {
    book.withdraw(owner).ifPresent(this::grant);
    forget(owner);
    return Behaviors.same();
  }

  private void grant(ActorRef<?> next) {
    timers.cancel(next);
    Waiter w = owners.get(next);
    if (w != null) {
      w.replyTo().tell(new Granted(w.taskId()));
    }
  }

  private Waiter forget(ActorRef<?> owner) {
    timers.cancel(owner);
    Waiter w = owners.remove(owner);
    if (w != null) {
      ctx.unwatch(owner);
    }
    return w;
  }
}
