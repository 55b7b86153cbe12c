package io.capsule.protocol.frame;

import java.util.Objects;

/** hub → runner: stop the task gracefully (the runner interrupts the turn). */
public record TaskCancel(String taskId, String reason, long seq, Extras extra)
    implements SequencedFrame {
  public static final String TYPE = "task.cancel";

  public TaskCancel {
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(reason, "reason");
    extra = extra == null ? Extras.NONE : extra;
  }

  public TaskCancel(String taskId, String reason) {
    this(taskId, reason, 0, Extras.NONE);
  }

  @Override
  public TaskCancel withSeq(long newSeq) {
    return new TaskCancel(taskId, reason, newSeq, extra);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
