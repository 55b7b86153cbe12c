package io.capsule.hub.runner;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the hub may acknowledge to one runner while some of its applied frames are still on their
 * way to the store. The runner's {@link io.capsule.protocol.seq.SeqState} applies a frame as soon
 * as it arrives (so the next frame sequences after it), but an {@code ack} may only cover what is
 * kept: a runner drops what the hub acked, so acking an unkept frame loses it on a crash. Pure.
 *
 * <p>Per task with frames in flight it remembers the highest seq kept; {@link #body} lowers the
 * sequencing's ack map to that. A task whose report is kept is owed an ack (the sequencing already
 * handed it out, lowered, while the report was in flight) until the next body carries it.
 */
final class DurableAcks {
  private final Map<String, Integer> inFlight = new HashMap<>();
  private final Map<String, Long> kept = new HashMap<>();
  private final Map<String, Long> owed = new LinkedHashMap<>();
  private int total;

  /**
   * {@code n} applied frames of the task went to the store; {@code keptBelow} is the highest seq of
   * the task applied (and kept) before them.
   */
  void sent(String task, int n, long keptBelow) {
    if (inFlight.merge(task, n, Integer::sum) == n) {
      kept.put(task, keptBelow);
    }
    total += n;
  }

  /**
   * {@code n} frames of the task up to {@code seq} are kept; {@code report}: one was the report.
   */
  void kept(String task, int n, long seq, boolean report) {
    int left = inFlight.getOrDefault(task, 0) - n;
    if (left < 0) {
      throw new IllegalStateException(task + ": more frames kept than sent");
    }
    total -= n;
    if (left == 0) {
      inFlight.remove(task);
      kept.remove(task);
    } else {
      inFlight.put(task, left);
      kept.put(task, seq);
    }
    if (report) {
      owed.put(task, seq);
    }
  }

  /** Applied frames of this runner not yet kept. */
  int inFlight() {
    return total;
  }

  /**
   * The ack to send, from what the sequencing would ack: values of tasks with frames in flight
   * lowered to what is kept (dropped when nothing is), plus every owed report. Clears what it owed.
   */
  Map<String, Long> body(Map<String, Long> sequenced) {
    Map<String, Long> out = new LinkedHashMap<>();
    sequenced.forEach(
        (task, seq) -> {
          Long k = inFlight.containsKey(task) ? kept.get(task) : seq;
          if (k != null && k > 0) {
            out.put(task, Math.min(k, seq));
          }
        });
    owed.forEach(out::put);
    owed.clear();
    return out;
  }
}
