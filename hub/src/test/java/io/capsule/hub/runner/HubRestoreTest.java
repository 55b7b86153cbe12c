package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.hub.placement.Reclaim;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.store.HubJournal.Entry;
import io.capsule.hub.store.JournalHistory;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.SequencedFrame;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Rebuilding the hub's sequencing from journal entries: what it restores, what it refuses. */
class HubRestoreTest {
  private static final ProtocolConfig CONFIG = ProtocolConfig.builder().build();
  private static final List<Entry> H = JournalHistory.history(); // assign, text, cancel, report
  private static final RunnerKey OTHER = new RunnerKey("p", "r-2");

  @Test
  void aFinishedHistoryRestoresNoOpenTask() {
    assertEquals(0, HubRestore.of(CONFIG, H).openTasks());
  }

  @Test
  void anUnfinishedHistoryRestoresTheOpenTask() {
    assertEquals(1, HubRestore.of(CONFIG, H.subList(0, 3)).openTasks());
  }

  @Test
  void aTaskTakenFromADeadRunnerIsRestoredAsTakenUntilItIsPlacedAgain() {
    RunnerKey dead = H.get(0).runner();
    Entry reclaim =
        new Entry(
            dead,
            Direction.SENT,
            Reclaim.cancel("T-1", dead.runnerId(), java.time.Duration.ofSeconds(45)).withSeq(2));
    HubRestore taken = HubRestore.of(CONFIG, List.of(H.get(0), H.get(1), reclaim));
    assertEquals(0, taken.openTasks(), "no longer open on the dead runner");
    assertEquals(java.util.Map.of(dead, List.of("T-1")), taken.taken());
    assertTrue(taken.taskOwner().isEmpty());

    Entry again = new Entry(OTHER, Direction.SENT, H.get(0).frame());
    HubRestore placed = HubRestore.of(CONFIG, List.of(H.get(0), H.get(1), reclaim, again));
    assertEquals(java.util.Map.of(), placed.taken(), "placed again: nothing left to take back");
    assertEquals(OTHER, placed.taskOwner().get(HubRestore.owned("p", "T-1")));
    assertEquals(Set.of("T-1"), placed.runners().get(OTHER).openTasks());
    assertEquals(Set.of(), placed.runners().get(dead).openTasks());
  }

  @Test
  void aTaskTakenBackAndRunAgainOnTheSameRunnerAsItsNextAttemptIsNotTakenBackOnRestore() {
    RunnerKey back = H.get(0).runner();
    Entry reclaim =
        new Entry(
            back,
            Direction.SENT,
            Reclaim.cancel("T-1", back.runnerId(), java.time.Duration.ofSeconds(45)).withSeq(2));
    String wire = io.capsule.hub.placement.Attempt.wireId("T-1", 2);
    Entry again = new Entry(back, Direction.SENT, retask(H.get(0), wire));
    HubRestore r = HubRestore.of(CONFIG, List.of(H.get(0), H.get(1), reclaim, again));
    assertEquals(java.util.Map.of(), r.taken(), "its next attempt is placed: nothing to take back");
    assertEquals(Set.of(wire), r.runners().get(back).openTasks(), "open under its wire id");
    assertEquals(back, r.taskOwner().get(HubRestore.owned("p", wire)));
    assertEquals(null, r.taskOwner().get(HubRestore.owned("p", "T-1")), "the old attempt: nobody");
  }

  @Test
  void anOperatorsCancelDoesNotTakeTheTaskBack() {
    HubRestore r = HubRestore.of(CONFIG, H.subList(0, 3)); // assign, progress, cancel "operator"
    assertEquals(1, r.openTasks());
    assertEquals(java.util.Map.of(), r.taken());
  }

  static Stream<Arguments> outOfOrder() {
    return Stream.of(
        Arguments.of(
            "a sent frame skips a seq",
            List.of(
                H.get(0),
                new Entry(H.get(2).runner(), Direction.SENT, H.get(2).frame().withSeq(3)))),
        Arguments.of("a sent frame repeats a seq", List.of(H.get(0), H.get(0))),
        Arguments.of("an applied frame skips a seq", List.of(H.get(0), H.get(3))),
        Arguments.of("an applied frame repeats", List.of(H.get(0), H.get(1), H.get(1))),
        Arguments.of(
            "another runner's history mixed in",
            List.of(H.get(0), new Entry(OTHER, Direction.SENT, H.get(2).frame()))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("outOfOrder")
  void aJournalThatDoesNotReplayIsRefusedNamingTheEntry(String why, List<Entry> entries) {
    ProtocolException e =
        assertThrows(ProtocolException.class, () -> HubRestore.of(CONFIG, entries));
    assertEquals(Code.E_PRO_010, e.diagnostic().code(), why);
    assertTrue(e.getMessage().contains("journal entry " + entries.size()), e.getMessage());
  }

  @Test
  void aLongHistoryOfFinishedTasksRestoresInOrder() {
    List<Entry> many = new ArrayList<>();
    for (int t = 0; t < 500; t++) {
      String task = "T-" + t;
      for (Entry e : H) {
        many.add(new Entry(e.runner(), e.direction(), retask(e, task)));
      }
    }
    assertEquals(0, HubRestore.of(CONFIG, many).openTasks());
  }

  /**
   * A run of progress folded into its last frame restores what the run restores: the open task's
   * applied seq (its resume), and after the report a finished task whose late frames are
   * duplicates, never applied.
   */
  @Test
  void aFoldedRunOfProgressRestoresAsTheRunDoes() {
    RunnerKey r = H.get(0).runner();
    io.capsule.protocol.frame.TaskProgress p =
        (io.capsule.protocol.frame.TaskProgress) H.get(1).frame();
    List<Entry> whole = new ArrayList<>(List.of(H.get(0)));
    for (int seq = 1; seq <= 7; seq++) {
      whole.add(new Entry(r, Direction.APPLIED, p.withSeq(seq)));
    }
    List<Entry> folded = List.of(H.get(0), new Entry(r, Direction.APPLIED, p.withSeq(7), 7, null));
    assertEquals(
        HubRestore.of(CONFIG, whole).runners().get(r).seq().resumeMap(),
        HubRestore.of(CONFIG, folded).runners().get(r).seq().resumeMap());
    assertEquals(
        java.util.Map.of("T-1", 7L),
        HubRestore.of(CONFIG, folded).runners().get(r).seq().resumeMap());

    Entry report = new Entry(r, Direction.APPLIED, H.get(3).frame().withSeq(8));
    List<Entry> finished = new ArrayList<>(folded);
    finished.add(report);
    HubRestore done = HubRestore.of(CONFIG, finished);
    assertEquals(0, done.openTasks());
    var late = done.runners().get(r).seq().receive(p.withSeq(9));
    assertTrue(
        late.applied().isEmpty() && late.status() != io.capsule.protocol.seq.Receipt.Status.APPLIED,
        "a late frame of the finished task is not applied: " + late.status());
  }

  @Test
  void aFoldedRunThatDoesNotFollowWhatWasAppliedIsRefused() {
    RunnerKey r = H.get(0).runner();
    SequencedFrame p = H.get(1).frame();
    List<Entry> entries =
        List.of(
            H.get(0),
            new Entry(r, Direction.APPLIED, p.withSeq(1)),
            new Entry(r, Direction.APPLIED, p.withSeq(2)),
            new Entry(r, Direction.APPLIED, p.withSeq(7), 4, null)); // 4..7, but 2 applied
    ProtocolException e =
        assertThrows(ProtocolException.class, () -> HubRestore.of(CONFIG, entries));
    assertEquals(Code.E_PRO_010, e.code());
    assertTrue(e.getMessage().contains("journal entry 4"), e.getMessage());
  }

  private static SequencedFrame retask(Entry e, String task) {
    String wire =
        FrameCodec.shared().encodeToString(e.frame()).replace("\"T-1\"", "\"" + task + "\"");
    return (SequencedFrame) FrameCodec.shared().decode(wire, false);
  }
}
