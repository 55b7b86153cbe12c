package io.capsule.hub.placement;

import java.util.Objects;

/** What {@link Placement#plan} decided for one waiting task. */
public sealed interface Verdict {

  String taskId();

  /** Place the task on this runner now. */
  record Place(String taskId, String runnerId) implements Verdict {
    public Place {
      Objects.requireNonNull(taskId, "taskId");
      Objects.requireNonNull(runnerId, "runnerId");
    }
  }

  /**
   * The task stays queued; {@code reason} is a sentence for people (the API shows it), not a key to
   * branch on: no connected runner has the capsule, no free slot, or the named runner is busy, away
   * or does not announce the capsule.
   */
  record Wait(String taskId, String reason) implements Verdict {
    public Wait {
      Objects.requireNonNull(taskId, "taskId");
      Objects.requireNonNull(reason, "reason");
    }
  }

  /** The named runner is not among the known runners (the API answers 404 naming it). */
  record NoSuchRunner(String taskId, String runnerId) implements Verdict {
    public NoSuchRunner {
      Objects.requireNonNull(taskId, "taskId");
      Objects.requireNonNull(runnerId, "runnerId");
    }
  }
}
