package io.capsule.hub.queue;

import io.capsule.hub.HubCbor;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;

/**
 * One project's queue, event-sourced and sharded by project: which tasks were queued and which left
 * it, which finished tasks an admin deleted, and which tasks were asked to cancel while the brain
 * had taken them back from a dead runner. The hub's {@code TaskQueue} decides (placement is a pure
 * plan over the runners it sees); this entity only keeps those decisions, answering a {@link
 * Record} once its event is in the store, so a 201 {@code queued} (or a 204 delete) is never given
 * for what a crash could forget.
 *
 * <p>Compacted: its state ({@link QueueState}) is snapshotted every {@value #SNAPSHOT_EVERY} events
 * and the events before a snapshot are deleted, so a queue that has seen years of tasks recovers
 * from one snapshot and fewer than {@value #SNAPSHOT_EVERY} events, and a hub reads the state at
 * start ({@link Get}) rather than replaying the project's history.
 */
public final class QueueEntity
    extends EventSourcedBehavior<QueueEntity.Command, QueueEvent, QueueState> {

  /**
   * 100: every task that waits writes two events (queued, then placed or canceled); replaying 100
   * small CBOR events is a few milliseconds, and a snapshot (at most queue-max waiting specs) per
   * 100 writes keeps the store's extra traffic small.
   */
  static final int SNAPSHOT_EVERY = 100;

  public static final EntityTypeKey<Command> KEY = EntityTypeKey.create(Command.class, "Queue");

  /** What others may send a queue entity. */
  public sealed interface Command extends HubCbor {}

  /** Persist this event; answers {@code Done} once stored. */
  public record Record(QueueEvent event, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** Answers the queue's state: what a starting hub restores. */
  public record Get(ActorRef<QueueState> replyTo) implements Command {}

  public static Behavior<Command> create(String projectId) {
    return new QueueEntity(PersistenceId.of(KEY.name(), projectId));
  }

  private QueueEntity(PersistenceId id) {
    super(id);
  }

  @Override
  public QueueState emptyState() {
    return QueueState.EMPTY;
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    // Two snapshots kept: a snapshot that fails to load falls back to the one before it, whose
    // later events are still there.
    return RetentionCriteria.snapshotEvery(SNAPSHOT_EVERY, 2).withDeleteEventsOnSnapshot();
  }

  @Override
  public CommandHandler<Command, QueueEvent, QueueState> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(
            Record.class,
            (state, r) ->
                Effect().persist(r.event()).thenReply(r.replyTo(), s -> StatusReply.ack()))
        .onCommand(Get.class, (state, g) -> Effect().reply(g.replyTo(), state))
        .build();
  }

  @Override
  public EventHandler<QueueState, QueueEvent> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(QueueState::apply);
  }
}
