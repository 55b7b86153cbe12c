package io.capsule.protocol.seq;

import io.capsule.protocol.frame.SequencedFrame;
import java.util.List;

/**
 * What {@link SeqState#receive} did with a frame.
 *
 * @param status the outcome
 * @param applied the frames to act on now, in seq order: the received frame and any held frames it
 *     made contiguous; empty unless {@code status} is {@link Status#APPLIED}
 * @param expected the seq the receiver waits for next on this task (0 when the task is finished)
 */
public record Receipt(Status status, List<SequencedFrame> applied, long expected) {

  /** The outcomes of receiving a frame. */
  public enum Status {
    /** Applied (with any held frames that became contiguous). */
    APPLIED,
    /** At or below the highest applied seq, or already held: dropped silently. */
    DUPLICATE,
    /** Above highest+1: held until the gap fills. */
    HELD,
    /** Above highest+1 and the task's hold is full: dropped; the sender's replay brings it. */
    DROPPED,
    /** About a task already finished here and above its last seq: dropped. */
    FINISHED
  }

  public Receipt {
    applied = List.copyOf(applied);
  }

  public boolean isApplied() {
    return status == Status.APPLIED;
  }

  /** True when the receiver is missing frames before this one (held or dropped). */
  public boolean isGap() {
    return status == Status.HELD || status == Status.DROPPED;
  }

  static Receipt of(Status status, long expected) {
    return new Receipt(status, List.of(), expected);
  }
}
