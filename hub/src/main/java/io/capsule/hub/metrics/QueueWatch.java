package io.capsule.hub.metrics;

import java.time.Instant;
import java.util.List;

/**
 * Hears the project queue's steps: a task submitted (it enters the queue, placed at once or not)
 * and a task placed on a runner (its assignment accepted). {@link HubMetrics} times the wait,
 * {@link HubEventLog} writes a line.
 *
 * <p>Threading: called from HTTP request threads and the hub's event consumer, sometimes under the
 * queue's lock: implementations must be quick, thread-safe, and never call back into the queue.
 */
public interface QueueWatch {
  QueueWatch NONE = new QueueWatch() {};

  default void queued(String taskId, String capsule) {}

  /**
   * @param since when the hub learned of the task (its submission, or the hub's start for a task
   *     restored from the store)
   */
  default void placed(String taskId, String runner, Instant since) {}

  /** Tells each of {@code watches}, in order. */
  static QueueWatch all(List<QueueWatch> watches) {
    return new QueueWatch() {
      @Override
      public void queued(String taskId, String capsule) {
        watches.forEach(w -> w.queued(taskId, capsule));
      }

      @Override
      public void placed(String taskId, String runner, Instant since) {
        watches.forEach(w -> w.placed(taskId, runner, since));
      }
    };
  }
}
