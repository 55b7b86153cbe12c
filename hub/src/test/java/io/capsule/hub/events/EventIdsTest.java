package io.capsule.hub.events;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.task.TaskEvent;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Event ids over a task's journal, as a table. A journal is written as words: {@code a@r} an assign
 * to runner r, {@code pN} applied progress seq N, {@code rN} the applied report seq N, {@code cN} a
 * cancel the hub sent (no event). The ids are those of the events, in order.
 */
class EventIdsTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          one placement keeps the runner seqs   | a@A p1 p2 p3 r4                   | 1 2 3 4
          cancels sent carry no event           | a@A p1 c2 p2 r3                   | 1 2 3
          placed again counts on from the last  | a@A p1 p2 c2 a@B p1 p2 r3         | 1 2 3 4 5
          placed again before any event          | a@A c2 a@B p1 r2                  | 1 2
          placed three times                     | a@A p1 c2 a@B p1 p2 c2 a@C p1 r2  | 1 2 3 4 5
          """)
  void idsRunOnAcrossPlacementsWithoutAGap(String name, String journal, String ids) {
    EventIds order = new EventIds();
    List<Long> out = new ArrayList<>();
    for (String w : journal.trim().split("\\s+")) {
      order.next(event(w)).ifPresent(e -> out.add(e.id()));
    }
    assertEquals(Arrays.stream(ids.trim().split("\\s+")).map(Long::valueOf).toList(), out, name);
  }

  private static TaskEvent event(String w) {
    if (w.startsWith("a@")) {
      return new TaskEvent(
          "p",
          w.substring(2),
          Direction.SENT,
          "task.assign",
          1,
          "{\"type\":\"task.assign\",\"schema_version\":1,\"seq\":1}");
    }
    long seq = Long.parseLong(w.substring(1));
    return switch (w.charAt(0)) {
      case 'c' -> new TaskEvent("p", "x", Direction.SENT, "task.cancel", seq, "{}");
      case 'p' ->
          applied(
              new TaskProgress("T", "text", JsonNodeFactory.instance.objectNode().put("n", seq))
                  .withSeq(seq));
      default ->
          applied(
              new TaskReport(
                      TaskReportBody.builder("T", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
                  .withSeq(seq));
    };
  }

  private static TaskEvent applied(SequencedFrame f) {
    return new TaskEvent(
        "p", "x", Direction.APPLIED, f.type(), f.seq(), FrameCodec.shared().encodeToString(f));
  }
}
