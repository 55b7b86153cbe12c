package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.SequencedFrame;
import java.util.Map;

/** The hub's refusals of runner frames whose wording depends on its state. Pure. */
final class Refusals {
  private Refusals() {}

  /** A progress or report for a task not placed on the sending runner ({@code E-PRO-011}). */
  static FrameRejected notPlaced(RunnerKey key, SequencedFrame f, Map<String, RunnerKey> owners) {
    RunnerKey owner = owners.get(HubRestore.owned(key.projectId(), f.taskId()));
    return new FrameRejected(
        Code.E_PRO_011,
        "runner '"
            + key.runnerId()
            + "' sent "
            + f.type()
            + " seq "
            + f.seq()
            + " for task '"
            + f.taskId()
            + "', which "
            + (owner == null
                ? "is not an open task of this project"
                : "is placed on runner '" + owner.runnerId() + "'")
            + "; nothing of it was applied");
  }
}
