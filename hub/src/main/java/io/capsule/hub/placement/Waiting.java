package io.capsule.hub.placement;

import java.util.Objects;
import java.util.Optional;

/**
 * A task waiting for a runner, in queue order.
 *
 * @param taskId the task
 * @param capsule the capsule it runs
 * @param runner the runner the task names, if any; then it is placed on that runner or not at all
 */
public record Waiting(String taskId, String capsule, Optional<String> runner) {

  public Waiting {
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(capsule, "capsule");
    Objects.requireNonNull(runner, "runner");
  }

  /** A task any runner with its capsule may take. */
  public static Waiting any(String taskId, String capsule) {
    return new Waiting(taskId, capsule, Optional.empty());
  }

  /** A task that names its runner. */
  public static Waiting on(String taskId, String capsule, String runnerId) {
    return new Waiting(taskId, capsule, Optional.of(runnerId));
  }
}
