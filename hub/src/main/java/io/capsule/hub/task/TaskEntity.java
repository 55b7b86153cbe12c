package io.capsule.hub.task;

import io.capsule.hub.HubCbor;
import io.capsule.hub.store.HubJournal.Direction;
import java.util.List;
import java.util.Optional;
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
 * One task, event-sourced and sharded by task: every frame the hub sent it and every runner frame
 * applied for it, in order, checked by its {@link TaskLedger} before anything is persisted. A
 * {@link Record} is answered only after its events are in the store, so whoever acks or publishes
 * on that answer never acknowledges what a crash could lose. A record's frames are stored as few
 * rows ({@link TaskEvents#rows}): a group commit brings dozens of one task's frames at once.
 *
 * <p>Snapshots at the task's report and every {@value #SNAPSHOT_EVERY} applied frames (the row with
 * a runner seq that is a multiple of it): an entity's recovery, and a hub's restart ({@code
 * PersistentHubJournal#restorable}), read the latest snapshot (its {@link TaskLedger#kept} says
 * what a restart needs of the events before it) and at most that many events after it; a finished
 * task's, none. Events are kept (not deleted on snapshot): the task's SSE history reads them, until
 * retention erases the task. Older snapshots are not deleted either (one per {@value
 * #SNAPSHOT_EVERY} events; the erasure takes them too): deleting them cost a store transaction per
 * snapshot on the write path.
 */
public final class TaskEntity
    extends EventSourcedBehavior<TaskEntity.Command, TaskRow, TaskLedger> {

  /**
   * 500: a restart reads at most about this many frames of a running task, a few milliseconds of
   * CBOR; a snapshot is a store transaction of its own, and at 100 they were one in five of the
   * hub's transactions while runners streamed ({@code PersistBench}, benchmarks/README.md).
   */
  public static final int SNAPSHOT_EVERY = 500;

  public static final EntityTypeKey<Command> KEY = EntityTypeKey.create(Command.class, "Task");

  /** What others may send a task entity. */
  public sealed interface Command extends HubCbor {}

  /**
   * Persist these frames of this task, all or none, in order; answers {@code Done} once stored, or
   * an error naming the first frame the ledger refuses (nothing stored then).
   */
  public record Record(List<TaskEvent> events, ActorRef<StatusReply<Done>> replyTo)
      implements Command {
    public Record {
      events = List.copyOf(events);
    }
  }

  /** Answers the task's ledger. */
  public record Get(ActorRef<TaskLedger> replyTo) implements Command {}

  /**
   * The entity id of a task of a project: the project's length first, so that no two (project,
   * task) pairs share an id whatever characters they hold.
   */
  public static String entityId(String projectId, String taskId) {
    return projectId.length() + ":" + projectId + taskId;
  }

  public static Behavior<Command> create(String entityId) {
    return new TaskEntity(PersistenceId.of(KEY.name(), entityId));
  }

  private TaskEntity(PersistenceId id) {
    super(id);
  }

  @Override
  public TaskLedger emptyState() {
    return TaskLedger.EMPTY;
  }

  @Override
  public boolean shouldSnapshot(TaskLedger state, TaskRow row, long sequenceNr) {
    // By the row's own frames, not the state: Pekko hands a persistAll's predicate the state
    // before each event, a single persist's the state after it.
    for (TaskEvent e : row.events()) {
      if (e.isReport() || (e.direction() == Direction.APPLIED && e.seq() % SNAPSHOT_EVERY == 0)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public CommandHandler<Command, TaskRow, TaskLedger> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(Record.class, this::onRecord)
        .onCommand(Get.class, (state, g) -> Effect().reply(g.replyTo(), state))
        .build();
  }

  private org.apache.pekko.persistence.typed.javadsl.Effect<TaskRow, TaskLedger> onRecord(
      TaskLedger state, Record r) {
    Optional<String> no = state.refusal(r.events());
    if (no.isPresent()) {
      return Effect().reply(r.replyTo(), StatusReply.error(no.get()));
    }
    if (r.events().isEmpty()) {
      return Effect().reply(r.replyTo(), StatusReply.ack());
    }
    return Effect()
        .persist(TaskEvents.rows(r.events()))
        .thenReply(r.replyTo(), s -> StatusReply.ack());
  }

  @Override
  public EventHandler<TaskLedger, TaskRow> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(TaskLedger::apply);
  }
}
