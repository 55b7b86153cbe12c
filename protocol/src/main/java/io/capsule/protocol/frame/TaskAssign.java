package io.capsule.protocol.frame;

import java.util.Objects;

/** hub → runner: run this task. The hub's seq 1 for the task. */
public record TaskAssign(TaskSpec task, String role, Invocation invocation, long seq, Extras extra)
    implements SequencedFrame {
  public static final String TYPE = "task.assign";

  public TaskAssign {
    Objects.requireNonNull(task, "task");
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(invocation, "invocation");
    extra = extra == null ? Extras.NONE : extra;
  }

  public TaskAssign(TaskSpec task, String role, Invocation invocation) {
    this(task, role, invocation, 0, Extras.NONE);
  }

  @Override
  public String taskId() {
    return task.id();
  }

  @Override
  public TaskAssign withSeq(long newSeq) {
    return new TaskAssign(task, role, invocation, newSeq, extra);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
