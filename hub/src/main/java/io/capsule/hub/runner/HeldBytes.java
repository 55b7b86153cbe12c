package io.capsule.hub.runner;

import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.seq.Receipt;
import java.util.HashMap;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * The bytes of one runner's frames held above a gap: a held frame adds its encoded size, an applied
 * one that was held gives it back, a finished task gives back whatever it still held. Pure; the hub
 * compares {@link #total()} with its budget after each frame.
 */
final class HeldBytes {
  private final Map<String, Map<Long, Integer>> sizes = new HashMap<>();
  private long total;

  /**
   * Accounts one received frame and its receipt; {@code sizer} is asked only for a held frame (only
   * out-of-order frames pay for encoding). Returns the total after it.
   */
  long account(
      SequencedFrame f, Receipt r, boolean taskFinished, ToIntFunction<SequencedFrame> sizer) {
    if (r.status() == Receipt.Status.HELD) {
      int size = sizer.applyAsInt(f);
      sizes.computeIfAbsent(f.taskId(), k -> new HashMap<>()).put(f.seq(), size);
      total += size;
    }
    Map<Long, Integer> held = sizes.get(f.taskId());
    if (held != null) {
      for (SequencedFrame applied : r.applied()) {
        Integer size = held.remove(applied.seq());
        total -= size == null ? 0 : size;
      }
      if (held.isEmpty() || taskFinished) {
        held.values().forEach(size -> total -= size);
        sizes.remove(f.taskId());
      }
    }
    return total;
  }

  long total() {
    return total;
  }

  /** Every held frame was dropped. */
  void clear() {
    sizes.clear();
    total = 0;
  }
}
