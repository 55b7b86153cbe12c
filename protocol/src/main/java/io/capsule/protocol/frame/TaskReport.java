package io.capsule.protocol.frame;

import java.util.Objects;

/** runner → hub: the task's last frame, carrying its {@link TaskReportBody}. */
public record TaskReport(TaskReportBody report, long seq, Extras extra) implements SequencedFrame {
  public static final String TYPE = "task.report";

  public TaskReport {
    Objects.requireNonNull(report, "report");
    extra = extra == null ? Extras.NONE : extra;
  }

  public TaskReport(TaskReportBody report) {
    this(report, 0, Extras.NONE);
  }

  @Override
  public String taskId() {
    return report.taskId();
  }

  @Override
  public TaskReport withSeq(long newSeq) {
    return new TaskReport(report, newSeq, extra);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
