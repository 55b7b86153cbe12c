package io.capsule.hub.store;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.store.HubJournal.Entry;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.frame.UsageSplit;
import java.util.List;

/** A task's whole life as journal entries, for the store tests. */
public final class JournalHistory {
  private JournalHistory() {}

  /** assign, one progress with non-ASCII text, cancel, report: for {@code runner}'s task. */
  public static List<Entry> of(RunnerKey runner, String taskId) {
    TaskAssign assign =
        new TaskAssign(
                TaskSpec.builder(taskId, "feature", "Say hello").iterations(1).build(),
                "agent",
                Invocation.builder("capsule:hello").build())
            .withSeq(1);
    TaskProgress text =
        new TaskProgress(taskId, "text", JsonNodeFactory.instance.objectNode().put("delta", "hé\n"))
            .withSeq(1);
    TaskCancel cancel = new TaskCancel(taskId, "operator").withSeq(2);
    TaskReport report =
        new TaskReport(
                TaskReportBody.builder(taskId, "failed", new UsageSplit(1, 2, 3, 4, 5))
                    .failureType("canceled")
                    .build())
            .withSeq(2);
    return List.of(
        new Entry(runner, Direction.SENT, assign),
        new Entry(runner, Direction.APPLIED, text),
        new Entry(runner, Direction.SENT, cancel),
        new Entry(runner, Direction.APPLIED, report));
  }

  /** The history of task {@code T-1} of runner {@code p/r-1}. */
  public static List<Entry> history() {
    return of(new RunnerKey("p", "r-1"), "T-1");
  }
}
