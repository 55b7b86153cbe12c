package io.capsule.hub.placement;

import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A task waiting for a runner, in queue order.
 *
 * @param taskId the task
 * @param capsule the capsule it runs
 * @param runner the runner the task names, if any; then it is placed on that runner or not at all
 * @param gaveUp runners the task was taken from because they were gone past {@code dead-after}
 *     (each was told to cancel that run): the task may run on them again as a new {@link Attempt},
 *     but of runners equally loaded one not in this set wins
 */
public record Waiting(String taskId, String capsule, Optional<String> runner, Set<String> gaveUp) {

  public Waiting {
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(capsule, "capsule");
    Objects.requireNonNull(runner, "runner");
    gaveUp = Set.copyOf(Objects.requireNonNull(gaveUp, "gaveUp"));
  }

  public Waiting(String taskId, String capsule, Optional<String> runner) {
    this(taskId, capsule, runner, Set.of());
  }

  /** A task any runner with its capsule may take. */
  public static Waiting any(String taskId, String capsule) {
    return new Waiting(taskId, capsule, Optional.empty());
  }

  /** A task that names its runner. */
  public static Waiting on(String taskId, String capsule, String runnerId) {
    return new Waiting(taskId, capsule, Optional.of(runnerId));
  }

  /**
   * A task taken from {@code deadRunner} (and from any runner it was taken from before), waiting to
   * be placed again on any runner with its capsule.
   */
  public Waiting takenFrom(String deadRunner) {
    java.util.Set<String> all = new java.util.HashSet<>(gaveUp);
    all.add(deadRunner);
    return new Waiting(taskId, capsule, Optional.empty(), all);
  }
}
