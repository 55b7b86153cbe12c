package io.capsule.hub.runner;

import java.util.Objects;

/**
 * Who a runner is: its project and its {@code runner_id} (from the token; {@link #DEFAULT_RUNNER}
 * when the token names none, which suits a project with a single runner).
 */
public record RunnerKey(String projectId, String runnerId) {
  public static final String DEFAULT_RUNNER = "default";

  public RunnerKey {
    Objects.requireNonNull(projectId, "projectId");
    Objects.requireNonNull(runnerId, "runnerId");
  }

  @Override
  public String toString() {
    return projectId + "/" + runnerId;
  }
}
