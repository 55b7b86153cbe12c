package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.seq.SeqState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Held bytes follow the sequencing: held frames add, released ones and finished tasks give back.
 */
class HeldBytesTest {

  /** Frames of task T by seq ({@code r} = the report); every frame weighs 10 bytes here. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          in order: nothing held              | 1 2 3     | 0
          one above a gap                     | 2         | 10
          two above a gap                     | 3 2       | 20
          the gap filled gives all back       | 3 2 1     | 0
          partly filled keeps the rest        | 2 4 1     | 10
          a duplicate held frame counts once  | 3 3       | 10
          a report finishing the task         | 3 2 1r    | 0
          """)
  void followsTheSequencing(String why, String seqs, long expected) {
    SeqState seq = new SeqState(100, 100, 100);
    HeldBytes held = new HeldBytes();
    long total = 0;
    for (String s : seqs.split(" ")) {
      SequencedFrame f =
          s.endsWith("r")
              ? new TaskReport(
                      TaskReportBody.builder("T", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
                  .withSeq(Long.parseLong(s.substring(0, s.length() - 1)))
              : new TaskProgress("T", "text", JsonNodeFactory.instance.objectNode())
                  .withSeq(Long.parseLong(s));
      total = held.account(f, seq.receive(f), seq.isFinished("T"), x -> 10);
    }
    assertEquals(expected, total, why);
    assertEquals(total, held.total());
  }
}
