package io.capsule.protocol.seq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.ReplayOverflow;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SeqStateTest {

  private static SeqState state() {
    return new SeqState(1_000, 4, 100);
  }

  private static TaskCancel cancel(String task, long seq) {
    return new TaskCancel(task, "r" + seq).withSeq(seq);
  }

  private static TaskProgress progress(String task, long seq) {
    return new TaskProgress(task, "note", null).withSeq(seq);
  }

  private static TaskReport report(String task) {
    return new TaskReport(TaskReportBody.builder(task, "done", UsageSplit.ZERO).build());
  }

  @Test
  void theSeedExampleResumesWithTheTailOnly() {
    SeqState hub = state();
    SeqState runner = state();
    TaskCancel c1 = hub.emit(new TaskCancel("T-1", "a"));
    TaskCancel c2 = hub.emit(new TaskCancel("T-1", "b"));
    assertEquals(1, c1.seq());
    assertEquals(2, c2.seq());

    runner.receive(c1); // seq 2 is lost on the wire

    Map<String, Long> resume = runner.resumeMap();
    assertEquals(Map.of("T-1", 1L), resume);
    assertEquals(Map.of("T-1", List.of(c2)), hub.replayFor(resume));
  }

  /**
   * Arriving seqs on one task (fresh receiver, hold bound 4) and what each did: A applied (with the
   * seqs it applied in brackets), D duplicate, H held, X dropped because the hold is full.
   */
  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "1 2 3           | A[1] A[2] A[3]",
        "2 1             | H A[1,2]",
        "3 2 1           | H H A[1,2,3]",
        "1 1 1 2 2 1     | A[1] D D A[2] D D",
        "3 3 1 2         | H D A[1] A[2,3]",
        "1 3 5 2 4       | A[1] H H A[2,3] A[4,5]",
        "2 3 4 5 6 1     | H H H H X A[1,2,3,4,5]",
        "6 1 2 3 4 5 6   | H A[1] A[2] A[3] A[4] A[5,6] D",
      })
  void receivesStrictlyInOrder(String arriving, String expected) {
    SeqState rx = state();
    List<String> got = new ArrayList<>();
    for (String s : arriving.trim().split("\\s+")) {
      Receipt r = rx.receive(cancel("T", Long.parseLong(s)));
      got.add(
          switch (r.status()) {
            case APPLIED ->
                "A"
                    + r.applied().stream()
                        .map(f -> String.valueOf(f.seq()))
                        .toList()
                        .toString()
                        .replace(" ", "");
            case DUPLICATE -> "D";
            case HELD -> "H";
            case DROPPED -> "X";
            case FINISHED -> "F";
          });
    }
    assertEquals(Arrays.asList(expected.trim().split("\\s+")), got);
  }

  @Test
  void aDuplicateStormAppliesEachFrameOnce() {
    SeqState rx = state();
    int applied = 0;
    for (int round = 0; round < 50; round++) {
      for (long s = 1; s <= 20; s++) {
        applied += rx.receive(progress("T", s)).applied().size();
      }
    }
    assertEquals(20, applied);
    assertEquals(Map.of("T", 20L), rx.resumeMap());
  }

  @Test
  void sequencesAreIndependentPerTask() {
    SeqState tx = state();
    assertEquals(1, tx.emit(progress("A", 0)).seq());
    assertEquals(1, tx.emit(progress("B", 0)).seq());
    assertEquals(2, tx.emit(progress("A", 0)).seq());
    assertEquals(2, tx.lastEmitted("A"));
    assertEquals(1, tx.lastEmitted("B"));
  }

  @Test
  void aFullBufferRefusesWithE_PRO_006AndSequencesNothing() {
    SeqState tx = new SeqState(3, 4, 10);
    for (int i = 0; i < 3; i++) {
      tx.emit(progress("T", 0));
    }
    ReplayOverflow e = assertThrows(ReplayOverflow.class, () -> tx.emit(progress("T", 0)));
    assertEquals(Code.E_PRO_006, e.code());
    assertEquals(3, tx.lastEmitted("T"));

    tx.ack(Map.of("T", 1L));
    assertEquals(2, tx.buffered());
    assertEquals(4, tx.emit(progress("T", 0)).seq());
  }

  @Test
  void anAckTrimsTheBufferAndReplayBringsOnlyTheRest() {
    SeqState tx = state();
    for (int i = 0; i < 5; i++) {
      tx.emit(progress("T", 0));
    }
    tx.ack(Map.of("T", 3L));
    assertEquals(2, tx.buffered());
    List<SequencedFrame> replay = tx.replayListFor(Map.of());
    assertEquals(List.of(4L, 5L), replay.stream().map(SequencedFrame::seq).toList());
  }

  @Test
  void replayTakesTheTasksInTurnSoNoTaskWaitsForAnothersBacklog() {
    SeqState tx = state();
    for (int i = 0; i < 3; i++) {
      tx.emit(progress("A", 0));
    }
    tx.emit(progress("B", 0));
    for (int i = 0; i < 2; i++) {
      tx.emit(progress("C", 0));
    }
    List<String> order =
        tx.replayListFor(Map.of("A", 1L)).stream().map(f -> f.taskId() + f.seq()).toList();
    assertEquals(List.of("A2", "B1", "C1", "A3", "C2"), order);
  }

  @Test
  void aTaskThePeerDoesNotListIsReplayedFromSeqOne() {
    SeqState hub = state();
    hub.emit(cancel("listed", 0));
    hub.emit(cancel("listed", 0));
    hub.emit(cancel("unlisted", 0));
    Map<String, List<SequencedFrame>> replay = hub.replayFor(Map.of("listed", 1L));
    assertEquals(List.of(2L), replay.get("listed").stream().map(SequencedFrame::seq).toList());
    assertEquals(List.of(1L), replay.get("unlisted").stream().map(SequencedFrame::seq).toList());
  }

  @Test
  void theSenderReleasesATaskOnceItsReportIsAcked() {
    SeqState runner = state();
    runner.receive(cancel("T", 1));
    runner.emit(progress("T", 0));
    TaskReport r = runner.emit(report("T"));
    assertEquals(2, r.seq());

    runner.ack(Map.of("T", 1L));
    assertEquals(1, runner.buffered());
    assertEquals(Map.of("T", 1L), runner.resumeMap());

    runner.ack(Map.of("T", 2L));
    assertEquals(0, runner.buffered());
    assertTrue(runner.outboundTasks().isEmpty());
    assertTrue(runner.resumeMap().isEmpty());
    assertTrue(runner.isFinished("T"));
  }

  @Test
  void theReceiverFinishesATaskWhenItAppliesTheReportAndDropsLateReplays() {
    SeqState hub = state();
    hub.emit(cancel("T", 0)); // the hub's own frame for the task
    hub.receive(progress("T", 1));
    Receipt done = hub.receive(report("T").withSeq(2));
    assertTrue(done.isApplied());
    assertTrue(hub.isFinished("T"));
    assertEquals(0, hub.buffered(), "nothing is re-delivered for a finished task");
    assertEquals(Map.of("T", 2L), hub.takeAckMap());
    assertEquals(Map.of(), hub.takeAckMap(), "told once");

    assertEquals(Receipt.Status.DUPLICATE, hub.receive(progress("T", 1)).status());
    assertEquals(Receipt.Status.DUPLICATE, hub.receive(report("T").withSeq(2)).status());
    assertEquals(Map.of("T", 2L), hub.takeAckMap(), "a re-sent report is acked again");
    assertFalse(hub.resumeMap().containsKey("T"));
  }

  @Test
  void releaseForgetsATaskEntirely() {
    SeqState s = state();
    s.emit(progress("T", 0));
    s.receive(cancel("T", 1));
    s.release("T");
    assertEquals(0, s.buffered());
    assertTrue(s.resumeMap().isEmpty());
    assertEquals(0, s.lastEmitted("T"));
  }

  @Test
  void aSenderThatRestartedNumbersOnFromWhatThePeerAcks() {
    SeqState hub = state();
    SeqState before = state();
    for (int i = 0; i < 50; i++) {
      hub.receive(before.emit(progress("T", 0)));
    }
    SeqState restarted = state(); // remembers nothing it sent
    restarted.ack(hub.takeAckMap());
    assertEquals(50, restarted.lastEmitted("T"));
    TaskProgress next = restarted.emit(progress("T", 0));
    assertEquals(51, next.seq(), "not a second seq 1, which the peer would drop");
    assertTrue(hub.receive(next).isApplied());
    assertEquals(52, restarted.emit(report("T")).seq());
  }

  @Test
  void anAckOfATaskFinishedHereOrOfNothingSetsNoFloor() {
    SeqState runner = state();
    runner.emit(report("T"));
    runner.ack(Map.of("T", 1L)); // the report is acked: T is finished and released here
    runner.ack(Map.of("T", 1L, "U", 0L)); // told again; U with nothing applied
    assertEquals(0, runner.lastEmitted("T"));
    assertEquals(0, runner.lastEmitted("U"));
    assertEquals(1, runner.emit(progress("U", 0)).seq());
  }

  @Test
  void releaseForgetsAFloorToo() {
    SeqState s = state();
    s.ack(Map.of("T", 7L));
    assertEquals(7, s.lastEmitted("T"));
    s.release("T");
    assertEquals(1, s.emit(progress("T", 0)).seq());
  }
}
