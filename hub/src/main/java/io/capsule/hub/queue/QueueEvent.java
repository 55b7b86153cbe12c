package io.capsule.hub.queue;

import io.capsule.hub.HubCbor;
import java.util.Objects;

/**
 * What the project's queue entity persists: a task queued (with everything its later assignment
 * needs, as JSON text so unknown fields survive), placed, or canceled while it waited, a cancel
 * asked while it was taken back from a dead runner ({@code CANCEL_REQUESTED}), or a finished task
 * of the project deleted through the API ({@code FORGOTTEN}, placed or not). A task placed at once,
 * without waiting, never appears here: its {@code task.assign} in the task entity is its whole
 * record.
 *
 * @param runner the runner the task names, or empty for any
 */
public record QueueEvent(
    Kind kind,
    String taskId,
    String capsule,
    String runner,
    String role,
    String spec,
    String invocation)
    implements HubCbor {

  public enum Kind {
    QUEUED,
    PLACED,
    CANCELED,
    /** An admin deleted the finished task: it is not shown again and its id is not reused. */
    FORGOTTEN,
    /**
     * A cancel was asked for a task that waits in no queue and no runner was told of it: the brain
     * had taken it back from a runner gone past {@code dead-after} (its notice not yet heard, or
     * heard and the task waiting to be placed again). The take-back, journaled by the brain, is
     * replayed at every restart; this is what makes it end the task canceled there rather than
     * place it again. Added after the first four: stores written before it hold none.
     */
    CANCEL_REQUESTED
  }

  public QueueEvent {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(capsule, "capsule");
    Objects.requireNonNull(runner, "runner");
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(invocation, "invocation");
  }

  public static QueueEvent queued(
      String taskId, String capsule, String runner, String role, String spec, String invocation) {
    return new QueueEvent(Kind.QUEUED, taskId, capsule, runner, role, spec, invocation);
  }

  /**
   * The task left the queue ({@code PLACED} or {@code CANCELED}), was deleted ({@code FORGOTTEN}),
   * or its cancel was asked while it was taken back ({@code CANCEL_REQUESTED}); only the id
   * matters.
   */
  public static QueueEvent left(Kind kind, String taskId) {
    return new QueueEvent(kind, taskId, "", "", "", "", "");
  }
}
