package io.capsule.runtime.cluster;

import io.capsule.config.diag.Code;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.time.Duration;
import java.util.Optional;

/**
 * The outcomes a sharded run gets from the cluster rather than from its harness: the node was lost,
 * no slot, no runner, or canceled before it started. Shaped like a run's own (status {@code
 * failed}, the code as {@code failure_type}, a canceled one as a run's cancel is), so a caller
 * reads them the same way.
 */
public final class ClusterOutcomes {
  private ClusterOutcomes() {}

  /** A failure of the cluster's making, with its {@code E-CLU-*} code. */
  public static RunOutcome failed(String taskId, Code code, String message, Duration took) {
    return new RunOutcome(
        taskId,
        RunStatus.FAILED,
        Optional.empty(),
        0,
        UsageSplit.ZERO,
        Optional.of(code.id()),
        Optional.of(code.id()),
        message,
        Optional.empty(),
        took);
  }

  /** Canceled before the harness was started: nothing ran. */
  public static RunOutcome canceled(String taskId, String reason, Duration took) {
    return new RunOutcome(
        taskId,
        RunStatus.FAILED,
        Optional.empty(),
        0,
        UsageSplit.ZERO,
        Optional.of(Code.E_RUN_040.id()),
        Optional.of("canceled"),
        "the task was canceled: " + reason,
        Optional.empty(),
        took);
  }
}
