package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.seq.SeqState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What each runner frame does to its session, frame by frame. */
class FrameIntakeTest {
  private static final RunnerKey KEY = new RunnerKey("p", "r");

  /**
   * Frames are {@code TASK:SEQ} ({@code r} after the seq: the report); T is placed on the runner, X
   * is not. Outcomes: {@code apply(seqs)}, {@code held}, {@code again} (ack a finished task again),
   * {@code refused}, {@code over} (held bytes past the budget of 25, 10 per frame).
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          in order applies one at a time      | T:1 T:2          | apply(1) apply(2)
          a gap holds, its filler releases    | T:2 T:1          | held apply(1.2)
          a duplicate is nothing              | T:1 T:1          | apply(1) held
          not placed here is refused          | X:1              | refused
          a report finishes the task          | T:1r T:1r        | apply(1) again
          held bytes past the budget close    | T:2 T:3 T:4      | held held over
          after the budget the gap starts over | T:2 T:3 T:4 T:1 T:2 | held held over apply(1) apply(2)
          """)
  void decidesPerFrame(String why, String frames, String expected) {
    RunnerSession s = new RunnerSession(new SeqState(100, 100, 100));
    s.openTasks.add("T");
    List<String> got = new ArrayList<>();
    for (String f : frames.split(" ")) {
      String[] p = f.split(":");
      FrameIntake.Outcome o = FrameIntake.take(s, KEY, frame(p[0], p[1]), Map.of(), 25, x -> 10);
      got.add(describe(o));
    }
    assertEquals(expected, String.join(" ", got), why);
  }

  private static String describe(FrameIntake.Outcome o) {
    if (o instanceof FrameIntake.Apply a) {
      return "apply("
          + a.frames().stream().map(f -> String.valueOf(f.seq())).collect(Collectors.joining("."))
          + ")";
    }
    if (o instanceof FrameIntake.NotPlaced) {
      return "refused";
    }
    if (o instanceof FrameIntake.OverBudget) {
      return "over";
    }
    return ((FrameIntake.Nothing) o).ackAgain() ? "again" : "held";
  }

  private static SequencedFrame frame(String task, String seq) {
    if (seq.endsWith("r")) {
      return new TaskReport(
              TaskReportBody.builder(task, "done", new UsageSplit(1, 2, 3, 4, 5)).build())
          .withSeq(Long.parseLong(seq.substring(0, seq.length() - 1)));
    }
    return new TaskProgress(task, "text", JsonNodeFactory.instance.objectNode())
        .withSeq(Long.parseLong(seq));
  }
}
