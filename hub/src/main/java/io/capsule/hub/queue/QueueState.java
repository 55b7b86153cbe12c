package io.capsule.hub.queue;

import io.capsule.hub.HubCbor;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a project's queue entity knows, folded from its events: the tasks still waiting (in queue
 * order, with what their assignment needs), the tasks canceled while they waited (the queue is
 * their only record), the ids an admin deleted (never shown again, never reused), and the tasks
 * whose cancel was asked while they were taken back from a dead runner ({@code cancelRequested}:
 * the brain's journal replays the take-back, this ends them canceled). Pure and immutable; the
 * entity's snapshots are this record, so its older events can be dropped.
 *
 * <p>{@link #asEvents()} is the shortest history with the same meaning, which is what a hub reads
 * at start: one {@code QUEUED} per waiting task, {@code QUEUED} and {@code CANCELED} per canceled
 * one, one {@code FORGOTTEN} per deleted id, one {@code CANCEL_REQUESTED} per id whose cancel was
 * asked.
 *
 * @param cancelRequested added after the first three: a snapshot written before it has none (read
 *     as empty)
 */
public record QueueState(
    List<QueueEvent> waiting,
    List<QueueEvent> canceled,
    List<String> forgotten,
    List<String> cancelRequested)
    implements HubCbor {

  public static final QueueState EMPTY = new QueueState(List.of(), List.of(), List.of(), List.of());

  public QueueState {
    waiting = List.copyOf(waiting);
    canceled = List.copyOf(canceled);
    forgotten = List.copyOf(forgotten);
    cancelRequested = cancelRequested == null ? List.of() : List.copyOf(cancelRequested);
  }

  /** The state after {@code e}; never refuses (recovery replays what was stored). */
  public QueueState apply(QueueEvent e) {
    String id = e.taskId();
    return switch (e.kind()) {
      case QUEUED ->
          contains(waiting, id)
              ? this
              : new QueueState(plus(waiting, e), canceled, forgotten, cancelRequested);
      case PLACED -> new QueueState(minus(waiting, id), canceled, forgotten, cancelRequested);
      case CANCELED ->
          find(waiting, id)
              .map(
                  w ->
                      new QueueState(
                          minus(waiting, id), plus(canceled, w), forgotten, cancelRequested))
              .orElse(this);
      case FORGOTTEN -> {
        List<String> f = new ArrayList<>(forgotten);
        if (!f.contains(id)) {
          f.add(id);
        }
        List<String> asked = cancelRequested.stream().filter(a -> !a.equals(id)).toList();
        yield new QueueState(minus(waiting, id), minus(canceled, id), f, asked);
      }
      case CANCEL_REQUESTED -> {
        if (cancelRequested.contains(id) || forgotten.contains(id)) {
          yield this;
        }
        List<String> asked = new ArrayList<>(cancelRequested);
        asked.add(id);
        yield new QueueState(waiting, canceled, forgotten, asked);
      }
    };
  }

  /** The shortest event history that rebuilds this state (see the class comment). */
  public List<QueueEvent> asEvents() {
    List<QueueEvent> out = new ArrayList<>(waiting);
    for (QueueEvent c : canceled) {
      out.add(c);
      out.add(QueueEvent.left(QueueEvent.Kind.CANCELED, c.taskId()));
    }
    forgotten.forEach(id -> out.add(QueueEvent.left(QueueEvent.Kind.FORGOTTEN, id)));
    cancelRequested.forEach(id -> out.add(QueueEvent.left(QueueEvent.Kind.CANCEL_REQUESTED, id)));
    return List.copyOf(out);
  }

  private static boolean contains(List<QueueEvent> list, String id) {
    return find(list, id).isPresent();
  }

  private static java.util.Optional<QueueEvent> find(List<QueueEvent> list, String id) {
    return list.stream().filter(e -> e.taskId().equals(id)).findFirst();
  }

  private static List<QueueEvent> plus(List<QueueEvent> list, QueueEvent e) {
    List<QueueEvent> out = new ArrayList<>(list);
    out.add(Objects.requireNonNull(e));
    return out;
  }

  private static List<QueueEvent> minus(List<QueueEvent> list, String id) {
    return list.stream().filter(e -> !e.taskId().equals(id)).toList();
  }
}
