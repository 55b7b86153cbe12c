package io.capsule.hub.events;

import java.util.List;
import java.util.function.Consumer;

/**
 * This node's live push of a task's events: the hub publishes each applied event here right after
 * it is stored, so a watcher hears it without waiting for the journal's next poll.
 *
 * <p>Threading: {@code live} is called on whichever thread applies the event, one event at a time
 * and in order; it must only hand the event on (offer it to a bounded queue), never block.
 */
@FunctionalInterface
public interface LocalFeed {

  /** What a subscription gets: events only this node has (none for most tasks), and a stop. */
  record Subscription(List<TaskEntry> history, Runnable cancel) {
    public Subscription {
      history = List.copyOf(history);
    }
  }

  Subscription subscribe(Consumer<TaskEntry> live);

  /** No live push (a node that does not run the task's hub): the journal's poll alone. */
  static LocalFeed none() {
    return live -> new Subscription(List.of(), () -> {});
  }
}
