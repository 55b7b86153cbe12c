package io.capsule.hub.placement;

import io.capsule.config.diag.Code;
import io.capsule.protocol.frame.TaskCancel;
import java.time.Duration;

/**
 * The {@code task.cancel} the hub sends a runner gone past {@code dead-after} for each task it
 * takes from it to place again ({@code E-HUB-008}). It is journaled like any frame the hub sends,
 * before the task's new assignment, so it is both what the runner hears when it comes back (cancel
 * the run, its later frames for the task are refused with {@code E-PRO-011}) and the record from
 * which a restarted hub knows the task was taken back: its reason starts with the code.
 */
public final class Reclaim {
  private Reclaim() {}

  /** The cancel that takes {@code taskId} from {@code runnerId}. */
  public static TaskCancel cancel(String taskId, String runnerId, Duration deadAfter) {
    return new TaskCancel(
        taskId,
        Code.E_HUB_008.id()
            + ": runner '"
            + runnerId
            + "' was gone longer than dead-after ("
            + deadAfter.toMillis()
            + " ms); the task is placed again on another runner");
  }

  /** True for a cancel {@link #cancel} made. */
  public static boolean isReclaim(TaskCancel c) {
    return c.reason().startsWith(Code.E_HUB_008.id() + ":");
  }
}
