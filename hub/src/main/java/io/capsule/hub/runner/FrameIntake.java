package io.capsule.hub.runner;

import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.seq.Receipt;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * What one runner frame of a task ({@code task.progress}, {@code task.report}) does to the runner's
 * {@link RunnerSession}: refused when the task is not placed on the runner, held above a gap
 * (within a byte budget), applied with whatever a filled gap releases, or a replay of a finished
 * task. Pure apart from the session it updates: the hub's actor acts on the outcome (journal,
 * publish, ack, close).
 */
final class FrameIntake {
  private static final FrameCodec CODEC = FrameCodec.shared();

  private FrameIntake() {}

  sealed interface Outcome {}

  /** Not placed on this runner: nothing applied or held ({@code E-PRO-011}). */
  record NotPlaced(FrameRejected why) implements Outcome {}

  /** Held frames passed the budget and were all dropped; the connection must close. */
  record OverBudget(long heldBytes) implements Outcome {}

  /** To journal, in order, as one group; then publish and ack. */
  record Apply(List<SequencedFrame> frames) implements Outcome {}

  /** Nothing to write; {@code ackAgain}: a finished task's replay, tell the runner again. */
  record Nothing(boolean ackAgain) implements Outcome {}

  static Outcome take(
      RunnerSession s,
      RunnerKey key,
      SequencedFrame f,
      Map<String, RunnerKey> owners,
      long heldBytesBudget) {
    return take(s, key, f, owners, heldBytesBudget, x -> CODEC.encode(x).length);
  }

  /** {@code sizer}: a held frame's size in bytes (the encoded frame; tables use a constant). */
  static Outcome take(
      RunnerSession s,
      RunnerKey key,
      SequencedFrame f,
      Map<String, RunnerKey> owners,
      long heldBytesBudget,
      ToIntFunction<SequencedFrame> sizer) {
    if (!s.openTasks.contains(f.taskId()) && !s.seq.isFinished(f.taskId())) {
      // A runner could otherwise fill the hub with frames of tasks it invents.
      return new NotPlaced(Refusals.notPlaced(key, f, owners));
    }
    Receipt r = s.seq.receive(f);
    long held = s.held.account(f, r, s.seq.isFinished(f.taskId()), sizer);
    if (held > heldBytesBudget) {
      // Safe to drop: held frames were neither applied nor acknowledged; the runner replays them.
      s.seq.dropHeld();
      s.held.clear();
      return new OverBudget(held);
    }
    if (!r.applied().isEmpty()) {
      return new Apply(r.applied());
    }
    return new Nothing(f instanceof TaskReport || r.status() == Receipt.Status.FINISHED);
  }
}
