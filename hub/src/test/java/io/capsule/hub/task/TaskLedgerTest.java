package io.capsule.hub.task;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.hub.store.HubJournal.Direction;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The task entity's command handler as a pure table: a history, then one frame, then a verdict. */
class TaskLedgerTest {

  /**
   * {@code history} and {@code next} are frames written {@code DIR:type:runner:seq} ({@code S}
   * sent, {@code A} applied; {@code assign}, {@code cancel}, {@code progress}, {@code report}; an
   * assign of a later attempt {@code S:assign:runner:1:attempt}), history separated by spaces;
   * {@code refusal} is a fragment of the reason, or empty to accept.
   */
  @ParameterizedTest(name = "{0} then {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ''                                        | S:assign:r1:1   | ''
          ''                                        | S:assign:r1:2   | an assign must carry seq 1
          ''                                        | S:cancel:r1:1   | never assigned
          ''                                        | A:progress:r1:1 | placed on no runner
          S:assign:r1:1                             | A:progress:r1:1 | ''
          S:assign:r1:1                             | A:progress:r2:1 | placed on runner 'r1'
          S:assign:r1:1                             | A:report:r2:1   | placed on runner 'r1'
          S:assign:r1:1                             | A:progress:r1:2 | not the next (1)
          S:assign:r1:1 A:progress:r1:1             | A:progress:r1:1 | not the next (2)
          S:assign:r1:1 A:progress:r1:1             | A:report:r1:2   | ''
          S:assign:r1:1 A:report:r1:1               | A:progress:r1:2 | after the task's report
          S:assign:r1:1 A:report:r1:1               | S:assign:r2:1   | it is not placed again
          S:assign:r1:1                             | S:assign:r1:1   | already placed on runner 'r1'
          S:assign:r1:1 S:cancel:r1:2               | S:assign:r1:1:2 | ''
          S:assign:r1:1 S:cancel:r1:2 S:assign:r1:1:2 | S:assign:r1:1:2 | only a later attempt
          S:assign:r1:1 S:cancel:r1:2 S:assign:r1:1:2 | A:progress:r1:1 | ''
          S:assign:r1:1 S:cancel:r1:2 S:assign:r1:1:2 | A:progress:r1:2 | not the next (1)
          S:assign:r1:1 S:assign:r2:1:2             | S:assign:r1:1:3 | ''
          S:assign:r1:1                             | S:cancel:r1:2   | ''
          S:assign:r1:1                             | S:cancel:r1:1   | does not rise above 1
          S:assign:r1:1                             | S:cancel:r2:2   | placed on runner 'r1', not 'r2'
          S:assign:r1:1 A:progress:r1:1             | S:assign:r2:1   | ''
          S:assign:r1:1 A:progress:r1:4 S:assign:r2:1 | A:progress:r2:1 | ''
          S:assign:r1:1 S:assign:r2:1               | A:progress:r1:1 | placed on runner 'r2'
          """)
  void decidesEachFrameAfterTheTasksHistory(String history, String next, String refusal) {
    TaskLedger ledger = TaskLedger.EMPTY;
    for (String h : history.isBlank() ? new String[0] : history.trim().split("\\s+")) {
      ledger = ledger.apply(event(h)); // apply never refuses: recovery replays
    }
    Optional<String> verdict = ledger.refusal(event(next));
    if (refusal.isEmpty()) {
      assertEquals(Optional.empty(), verdict);
    } else {
      assertEquals(
          true,
          verdict.map(v -> v.contains(refusal)).orElse(false),
          "expected a refusal containing '" + refusal + "', got " + verdict);
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          S:assign:r1:1 A:progress:r1:1 A:progress:r1:2 A:report:r1:3 | ''
          S:assign:r1:1 A:progress:r1:1 A:progress:r1:1               | not the next (2)
          S:assign:r1:1 A:report:r1:1 A:progress:r1:2                 | after the task's report
          """)
  void aBatchIsJudgedFrameByFrameAndRefusedWhole(String batch, String refusal) {
    List<TaskEvent> events = new ArrayList<>();
    for (String e : batch.trim().split("\\s+")) {
      events.add(event(e));
    }
    Optional<String> verdict = TaskLedger.EMPTY.refusal(events);
    assertEquals(refusal.isEmpty(), verdict.isEmpty(), String.valueOf(verdict));
    verdict.ifPresent(v -> assertEquals(true, v.contains(refusal), v));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          S:assign:r1:1                                               | r1 | 1 | 0 | 0 | false | 1 | 1
          S:assign:r1:1 A:progress:r1:1 A:progress:r1:2               | r1 | 1 | 2 | 2 | false | 1 | 1
          S:assign:r1:1 A:progress:r1:1 S:cancel:r1:2 A:report:r1:2   | r1 | 2 | 2 | 1 | true  | 1 | 1
          S:assign:r1:1 A:progress:r1:1 S:assign:r2:1 A:progress:r2:1 | r2 | 1 | 1 | 2 | false | 2 | 1
          S:assign:r1:1 A:progress:r1:1 S:cancel:r1:2 S:assign:r1:1:2 A:progress:r1:1 | r1 | 1 | 1 | 2 | false | 2 | 2
          """)
  void theLedgerKeepsPlacementSeqsProgressAndTheReport(
      String history,
      String runner,
      long lastSent,
      long lastApplied,
      int progress,
      boolean reported,
      int placements,
      int attempt) {
    TaskLedger ledger = TaskLedger.EMPTY;
    for (String h : history.trim().split("\\s+")) {
      ledger = ledger.apply(event(h));
    }
    assertEquals(
        new TaskLedger(
            runner, lastSent, lastApplied, progress, reported, placements, List.of(), attempt),
        facts(ledger));
  }

  /**
   * What a restart keeps of a history ({@link TaskLedger#kept}), written {@code seq/folded} per
   * kept event: runs of one runner's applied progress fold into their last; anything else, a {@code
   * state} progress included, stays.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          S:assign:r1:1 A:progress:r1:1 A:progress:r1:2 A:progress:r1:3 A:report:r1:4 | 1/1 3/3 4/1
          S:assign:r1:1 A:progress:r1:1 S:cancel:r1:2 A:progress:r1:2 A:report:r1:3   | 1/1 1/1 2/1 2/1 3/1
          S:assign:r1:1 A:progress:r1:1 A:state:r1:2 A:progress:r1:3 A:progress:r1:4  | 1/1 1/1 2/1 4/2
          S:assign:r1:1 A:progress:r1:1 S:assign:r2:1 A:progress:r2:1 A:progress:r2:2 | 1/1 1/1 1/1 2/2
          """)
  void aRestartKeepsRunsOfProgressFolded(String history, String kept) {
    TaskLedger ledger = TaskLedger.EMPTY;
    for (String h : history.trim().split("\\s+")) {
      ledger = ledger.apply(event(h));
    }
    assertEquals(
        kept,
        String.join(
            " ", ledger.kept().stream().map(k -> k.event().seq() + "/" + k.folded()).toList()));
  }

  @org.junit.jupiter.api.Test
  void aLedgerFromBeforeTheKeptEventsKeepsNone() {
    TaskLedger old = new TaskLedger("r1", 1, 1, 1, false, 1, null, 1);
    assertEquals(null, old.apply(event("A:progress:r1:2")).kept(), "the restart reads its events");
  }

  @org.junit.jupiter.api.Test
  void aLedgerFromBeforeAttemptsHadItsPlacementAsTheFirst() {
    TaskLedger old = new TaskLedger("r1", 2, 1, 1, false, 1, List.of(), 0); // as a snapshot reads
    assertEquals(1, old.attempt());
    assertEquals(Optional.empty(), old.refusal(event("S:assign:r1:1:2")));
    assertEquals(true, old.refusal(event("S:assign:r1:1")).isPresent());
  }

  /** The ledger's facts without what it keeps for a restart. */
  static TaskLedger facts(TaskLedger l) {
    return new TaskLedger(
        l.runnerId(),
        l.lastSentSeq(),
        l.lastAppliedSeq(),
        l.progressEvents(),
        l.reported(),
        l.placements(),
        List.of(),
        l.attempt());
  }

  @Test
  void aRowOfFramesLeavesTheLedgerAsTheFramesOneByOneDo() {
    List<TaskEvent> life =
        List.of(
            event("S:assign:r1:1"),
            event("A:progress:r1:1"),
            event("A:progress:r1:2"),
            event("A:state:r1:3"),
            event("A:progress:r1:4"),
            event("S:cancel:r1:2"),
            event("A:report:r1:5"));
    TaskLedger oneByOne = TaskLedger.EMPTY;
    for (TaskEvent e : life) {
      oneByOne = oneByOne.apply(e);
    }
    TaskLedger byRows =
        TaskLedger.EMPTY
            .apply(new TaskEvents(life.subList(0, 3)))
            .apply((TaskRow) life.get(3))
            .apply(new TaskEvents(life.subList(4, 7)));
    assertEquals(oneByOne, byRows);
    assertEquals(
        6, byRows.kept().size(), "assign, the run of two, state, progress, cancel, report");
  }

  static TaskEvent event(String spec) {
    String[] p = spec.split(":");
    Direction dir = p[0].equals("S") ? Direction.SENT : Direction.APPLIED;
    if (p[1].equals("state")) { // a progress of kind state
      return new TaskEvent(
          "p", p[2], dir, "task.progress", Long.parseLong(p[3]), "{\"kind\":\"state\"}");
    }
    if (p.length == 5) { // an assign of a later attempt: its task's wire id says which
      return new TaskEvent(
          "p",
          p[2],
          dir,
          "task." + p[1],
          Long.parseLong(p[3]),
          "{\"task\":{\"id\":\"t" + io.capsule.hub.placement.Attempt.MARK + p[4] + "\"}}");
    }
    return new TaskEvent("p", p[2], dir, "task." + p[1], Long.parseLong(p[3]), "{}");
  }
}
