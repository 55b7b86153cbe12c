package io.capsule.hub.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The task entity on the persistence TestKit: what it stores, what it refuses without storing, that
 * a restart recovers the ledger, and (the kit's serialization check) that every command, event and
 * snapshot goes through its binding (events {@link TaskEventSerializer}, the rest CBOR), not Java
 * serialization.
 */
class TaskEntityTest {
  private static final ActorTestKit KIT =
      ActorTestKit.create(
          EventSourcedBehaviorTestKit.config()
              .withFallback(PersistenceTestKitSnapshotPlugin.config())
              .withFallback(ConfigFactory.load()));

  private final EventSourcedBehaviorTestKit<TaskEntity.Command, TaskRow, TaskLedger> entity =
      EventSourcedBehaviorTestKit.create(
          KIT.system(), TaskEntity.create(TaskEntity.entityId("p", "T-1")));

  @BeforeEach
  void clear() {
    entity.clear();
  }

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aBatchOfFramesIsStoredInOrderAndAnsweredOnlyThen() {
    List<TaskEvent> batch =
        List.of(
            TaskLedgerTest.event("S:assign:r1:1"),
            TaskLedgerTest.event("A:progress:r1:1"),
            TaskLedgerTest.event("A:progress:r1:2"));
    CommandResultWithReply<TaskEntity.Command, TaskRow, TaskLedger, StatusReply<Done>> r =
        entity.<StatusReply<Done>>runCommand(reply -> new TaskEntity.Record(batch, reply));
    assertTrue(r.reply().isSuccess());
    assertEquals(List.of(new TaskEvents(batch)), r.events(), "one row for the batch");
    assertEquals(
        new TaskLedger("r1", 1, 2, 2, false, 1, List.of(), 1), TaskLedgerTest.facts(r.state()));
  }

  @Test
  void aForgedFrameFromAnotherRunnerIsRefusedAndNothingOfItsBatchIsStored() {
    entity.<StatusReply<Done>>runCommand(
        reply -> new TaskEntity.Record(List.of(TaskLedgerTest.event("S:assign:r1:1")), reply));
    CommandResultWithReply<TaskEntity.Command, TaskRow, TaskLedger, StatusReply<Done>> r =
        entity.<StatusReply<Done>>runCommand(
            reply ->
                new TaskEntity.Record(
                    List.of(
                        TaskLedgerTest.event("A:progress:r1:1"),
                        TaskLedgerTest.event("A:report:r2:2")),
                    reply));
    assertTrue(r.reply().isError());
    assertTrue(
        r.reply().getError().getMessage().contains("placed on runner 'r1'"),
        r.reply().getError().getMessage());
    assertTrue(r.hasNoEvents());
    assertEquals(
        new TaskLedger("r1", 1, 0, 0, false, 1, List.of(), 1), TaskLedgerTest.facts(r.state()));
  }

  @Test
  void aRestartRecoversTheLedgerFromTheStore() {
    entity.<StatusReply<Done>>runCommand(
        reply ->
            new TaskEntity.Record(
                List.of(
                    TaskLedgerTest.event("S:assign:r1:1"),
                    TaskLedgerTest.event("A:progress:r1:1"),
                    TaskLedgerTest.event("A:report:r1:2")),
                reply));
    EventSourcedBehaviorTestKit.RestartResult<TaskLedger> restarted = entity.restart();
    assertEquals(
        new TaskLedger("r1", 1, 2, 1, true, 1, List.of(), 1),
        TaskLedgerTest.facts(restarted.state()));
    assertEquals(
        List.of(1, 1, 1),
        restarted.state().kept().stream().map(TaskLedger.Kept::folded).toList(),
        "the assign, the one progress and the report");
  }

  @Test
  void pastTheSnapshotIntervalARestartStartsFromASnapshot() {
    entity.<StatusReply<Done>>runCommand(
        reply -> new TaskEntity.Record(List.of(TaskLedgerTest.event("S:assign:r1:1")), reply));
    for (int seq = 1; seq <= TaskEntity.SNAPSHOT_EVERY + 5; seq++) {
      String e = "A:progress:r1:" + seq;
      entity.<StatusReply<Done>>runCommand(
          reply -> new TaskEntity.Record(List.of(TaskLedgerTest.event(e)), reply));
    }
    TaskLedger expected =
        new TaskLedger(
            "r1",
            1,
            TaskEntity.SNAPSHOT_EVERY + 5,
            TaskEntity.SNAPSHOT_EVERY + 5,
            false,
            1,
            List.of(
                new TaskLedger.Kept(TaskLedgerTest.event("S:assign:r1:1"), 1),
                new TaskLedger.Kept(
                    TaskLedgerTest.event("A:progress:r1:" + (TaskEntity.SNAPSHOT_EVERY + 5)),
                    TaskEntity.SNAPSHOT_EVERY + 5)),
            1);
    assertEquals(expected, entity.restart().state(), "the snapshot kept the folded run");
    assertTrue(
        entity.snapshotTestKit().orElseThrow().persistedInStorage(pid()).stream()
            .anyMatch(s -> s.first().sequenceNr() > 0),
        "a snapshot was written");
  }

  @Test
  void aLongBatchIsStoredAsRowsOfBoundedSizeInOrder() {
    List<TaskEvent> batch = new ArrayList<>();
    batch.add(TaskLedgerTest.event("S:assign:r1:1"));
    for (int seq = 1; seq <= TaskEvents.MAX_EVENTS + 10; seq++) {
      batch.add(TaskLedgerTest.event("A:progress:r1:" + seq));
    }
    CommandResultWithReply<TaskEntity.Command, TaskRow, TaskLedger, StatusReply<Done>> r =
        entity.<StatusReply<Done>>runCommand(reply -> new TaskEntity.Record(batch, reply));
    assertTrue(r.reply().isSuccess());
    assertEquals(
        List.of(TaskEvents.MAX_EVENTS, 11),
        r.events().stream().map(row -> row.events().size()).toList());
    assertEquals(batch, r.events().stream().flatMap(row -> row.events().stream()).toList());
    assertEquals(TaskEvents.MAX_EVENTS + 10, entity.restart().state().lastAppliedSeq());
  }

  @Test
  void rowsAreCutByTheCharactersOfTheirFramesAndALargeFrameIsARowOfItsOwn() {
    String big = "x".repeat(TaskEvents.MAX_CHARS);
    List<TaskEvent> batch =
        List.of(
            TaskLedgerTest.event("A:progress:r1:1"),
            TaskLedgerTest.event("A:progress:r1:2"),
            withFrame(TaskLedgerTest.event("A:progress:r1:3"), big),
            TaskLedgerTest.event("A:progress:r1:4"),
            withFrame(TaskLedgerTest.event("A:progress:r1:5"), big.substring(1000)),
            withFrame(TaskLedgerTest.event("A:progress:r1:6"), "y".repeat(1000)));
    List<TaskRow> rows = TaskEvents.rows(batch);
    assertEquals(
        List.of(List.of(1L, 2L), List.of(3L), List.of(4L, 5L), List.of(6L)),
        rows.stream().map(row -> row.events().stream().map(TaskEvent::seq).toList()).toList());
    assertInstanceOf(TaskEvent.class, rows.get(1), "a single frame is stored as itself");
  }

  @Test
  void rowsOfSeveralFramesSnapshotWhenTheirProgressPassesTheInterval() {
    entity.<StatusReply<Done>>runCommand(
        reply -> new TaskEntity.Record(List.of(TaskLedgerTest.event("S:assign:r1:1")), reply));
    int total = TaskEntity.SNAPSHOT_EVERY + 40;
    for (int from = 1; from <= total; from += 64) {
      List<TaskEvent> batch = new ArrayList<>();
      for (int seq = from; seq < from + 64 && seq <= total; seq++) {
        batch.add(TaskLedgerTest.event("A:progress:r1:" + seq));
      }
      entity.<StatusReply<Done>>runCommand(reply -> new TaskEntity.Record(batch, reply));
    }
    List<Long> at =
        entity.snapshotTestKit().orElseThrow().persistedInStorage(pid()).stream()
            .map(s -> s.first().sequenceNr())
            .toList();
    // Rows: the assign, then 64 frames each; seq 500 is in the 8th row of frames (449-512).
    assertEquals(List.of(9L), at, "one snapshot, at the row holding runner seq 500");
    assertEquals(total, entity.restart().state().progressEvents());
  }

  private static TaskEvent withFrame(TaskEvent e, String frame) {
    return new TaskEvent(e.projectId(), e.runnerId(), e.direction(), e.type(), e.seq(), frame);
  }

  private static String pid() {
    return TaskEntity.KEY.name() + "|" + TaskEntity.entityId("p", "T-1");
  }
}
