package io.capsule.hub.events;

import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.task.TaskEvent;
import io.capsule.protocol.frame.TaskAssign;
import java.util.Optional;

/**
 * A task's event ids across its placements. A runner numbers a task's frames from 1; when the task
 * is placed again (its runner was gone past {@code dead-after}) the new runner starts at 1 again.
 * So an event's id is its seq plus the placement's offset: the last id the task had when it was
 * placed again (0 for the first placement). Ids then run on without a gap from one run to the next,
 * the old run's events keep theirs, and a watcher's {@code Last-Event-ID} resumes across the
 * re-placement ({@link EventOrder} needs no change).
 *
 * <p>The hub's live push ({@code TaskBook}) counts the same way: nothing of the old runner is
 * applied after its task is taken from it, so its last id is the offset of the next placement.
 *
 * <p>Pure and single-threaded: one instance per reading of a task's journal, fed in order from the
 * task's first event.
 */
public final class EventIds {
  private long offset;
  private long last;
  private int placements;

  /** The event {@code e} stands for, with its id, or empty (a frame the hub sent). */
  public Optional<TaskEntry> next(TaskEvent e) {
    if (e.direction() == Direction.SENT && TaskAssign.TYPE.equals(e.type())) {
      if (placements++ > 0) {
        offset = last;
      }
      return Optional.empty();
    }
    Optional<TaskEntry> entry = TaskEntry.of(e).map(x -> x.after(offset));
    entry.ifPresent(x -> last = x.id());
    return entry;
  }
}
