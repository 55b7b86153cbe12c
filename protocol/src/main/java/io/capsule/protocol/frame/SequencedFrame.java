package io.capsule.protocol.frame;

/**
 * A frame about one task, numbered per task and per direction (1, 2, 3, …). A frame not yet sent
 * carries seq 0; {@link io.capsule.protocol.seq.SeqState#emit} assigns the real number.
 */
public sealed interface SequencedFrame extends Frame
    permits TaskAssign, TaskProgress, TaskReport, TaskCancel {

  String taskId();

  long seq();

  /** The same frame with another seq. */
  SequencedFrame withSeq(long seq);
}
