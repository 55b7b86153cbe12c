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

/**
 * One project's queue, event-sourced and sharded by project: which tasks were queued and which left
 * it. The hub's {@code TaskQueue} decides (placement is a pure plan over the runners it sees); this
 * entity only keeps those decisions, answering a {@link Record} once its event is in the store, so
 * a 201 {@code queued} is never given for a task a crash could forget.
 *
 * <p>Its state is only the number of events: the queue is rebuilt from the events at start (through
 * Persistence Query, as the task entities' history is), never asked of the entity.
 */
public final class QueueEntity extends EventSourcedBehavior<QueueEntity.Command, QueueEvent, Long> {

  public static final EntityTypeKey<Command> KEY = EntityTypeKey.create(Command.class, "Queue");

  /** What others may send a queue entity. */
  public sealed interface Command extends HubCbor {}

  /** Persist this event; answers {@code Done} once stored. */
  public record Record(QueueEvent event, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  public static Behavior<Command> create(String projectId) {
    return new QueueEntity(PersistenceId.of(KEY.name(), projectId));
  }

  private QueueEntity(PersistenceId id) {
    super(id);
  }

  @Override
  public Long emptyState() {
    return 0L;
  }

  @Override
  public CommandHandler<Command, QueueEvent, Long> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(
            Record.class,
            (state, r) ->
                Effect().persist(r.event()).thenReply(r.replyTo(), s -> StatusReply.ack()))
        .build();
  }

  @Override
  public EventHandler<Long, QueueEvent> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent((count, e) -> count + 1);
  }
}
