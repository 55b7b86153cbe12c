package io.capsule.hub.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.hub.HubCluster;
import io.capsule.hub.events.TaskEntry;
import io.capsule.hub.events.TaskEventStream;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.store.HubJournal.Entry;
import io.capsule.hub.task.TaskEntity;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskProgress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.LongStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.ShardRegion.CurrentShardRegionState;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal on a real H2 file under a state directory (and, in {@link
 * PersistentHubJournalOnPostgresTest}, on a real PostgreSQL): what one hub (actor system) records,
 * the next one reads back frame for frame; forged or out-of-order entries are refused with their
 * code and not kept.
 */
class PersistentHubJournalTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private static final FrameCodec CODEC = FrameCodec.shared();

  @TempDir Path dir;

  /** The store a test starts on, empty and migrated. */
  HubStore freshStore() {
    HubStore store = HubStore.h2File(dir);
    store.migrate();
    return store;
  }

  @Test
  void entriesRecordedByOneHubAreReadBackByTheNextInTaskOrder() {
    HubStore store = freshStore();
    List<Entry> t1 = JournalHistory.of(new RunnerKey("p", "r-1"), "T-1");
    List<Entry> t2 = JournalHistory.of(new RunnerKey("p", "r-2"), "T-2");
    withJournal(
        store,
        j -> {
          assertEquals(List.of(), j.recorded());
          j.append(t1.get(0));
          j.append(t2.get(0));
          j.appendAll(t1.subList(1, 4)); // together, as the hub batches what arrives together
          j.appendAll(t2.subList(1, 4));
          return null;
        });
    List<Entry> expected = new ArrayList<>(t1);
    expected.addAll(t2);
    List<Entry> read = withJournal(store, PersistentHubJournal::recorded);
    assertSameEntries(expected, read);
  }

  @Test
  void aForgedReportForAnotherRunnersTaskIsRefusedAndNotKept() {
    HubStore store = freshStore();
    List<Entry> t1 = JournalHistory.history();
    withJournal(
        store,
        j -> {
          j.append(t1.get(0));
          Entry forged =
              new Entry(new RunnerKey("p", "intruder"), Direction.APPLIED, t1.get(3).frame());
          ProtocolException e = assertThrows(ProtocolException.class, () -> j.append(forged));
          assertEquals(Code.E_PRO_010, e.code());
          assertTrue(e.getMessage().contains("placed on runner 'r-1'"), e.getMessage());
          return null;
        });
    assertSameEntries(t1.subList(0, 1), withJournal(store, PersistentHubJournal::recorded));
  }

  @Test
  void aFrameThatDoesNotApplyNextIsRefusedWholeWithItsBatch() {
    HubStore store = freshStore();
    List<Entry> t1 = JournalHistory.history();
    TaskProgress skipped = ((TaskProgress) t1.get(1).frame()).withSeq(3);
    withJournal(
        store,
        j -> {
          j.append(t1.get(0));
          assertThrows(
              ProtocolException.class,
              () ->
                  j.appendAll(
                      List.of(
                          t1.get(1), new Entry(t1.get(1).runner(), Direction.APPLIED, skipped))));
          return null;
        });
    assertSameEntries(t1.subList(0, 1), withJournal(store, PersistentHubJournal::recorded));
  }

  /**
   * Many finished tasks of many events, one running task past a snapshot: the next hub reads each
   * finished task's snapshot and its first event only (for the task order), the running one's
   * snapshot and the events after it, not history; what it reads folds each run of progress into
   * its last frame. The events stay in the store: the whole history reads back.
   */
  @Test
  void aRestartReadsSnapshotsAndTailsNotTheHistory() {
    HubStore store = freshStore();
    RunnerKey runner = new RunnerKey("p", "r-1");
    int finished = 12;
    int progress = 150;
    int running = TaskEntity.SNAPSHOT_EVERY + 40; // events: the assign, then these
    withJournal(
        store,
        j -> {
          for (int t = 0; t < finished; t++) {
            j.appendAll(life(runner, "T-" + t, progress, true));
          }
          List<Entry> run = life(runner, "T-run", running, false);
          for (int i = 0; i < run.size(); i += 64) { // in writes of 64, as a hub's group commits
            j.appendAll(run.subList(i, Math.min(run.size(), i + 64)));
          }
          return null;
        });
    TaskReads.Read read =
        withJournal(store, j -> new TaskReads.Read(j.restorable(), j.eventsRead()));
    long tail = running + 1 - TaskEntity.SNAPSHOT_EVERY; // the snapshot is at or after this
    String of = "of " + (finished * (progress + 2) + running + 1) + " events";
    assertTrue(
        read.eventsRead() >= finished + 1 && read.eventsRead() <= finished + 1 + tail,
        "a first event per task and the running task's tail: " + read.eventsRead() + " " + of);
    List<String> shape = new ArrayList<>();
    for (Entry e : read.entries()) {
      shape.add(
          e.frame().taskId() + ":" + e.frame().type() + ":" + e.frame().seq() + "/" + e.folded());
    }
    assertEquals("T-0:task.assign:1/1", shape.get(0));
    assertEquals("T-0:task.progress:" + progress + "/" + progress, shape.get(1));
    assertEquals("T-0:task.report:" + (progress + 1) + "/1", shape.get(2));
    assertEquals(
        List.of("T-run:task.assign:1/1", "T-run:task.progress:" + running + "/" + running),
        shape.subList(3 * finished, shape.size()));
    assertEquals(
        finished * (progress + 2) + running + 1,
        withJournal(store, PersistentHubJournal::recorded).size(),
        "every event is still in the store");
  }

  /**
   * A brain that restored its tasks prepares the unfinished ones: their entities start (and
   * recover) then, not inside the first write of their resumed frames; a task not named stays
   * asleep.
   */
  @Test
  void preparedTasksHaveTheirEntitiesStartedBeforeAnyWrite() {
    HubStore store = freshStore();
    RunnerKey runner = new RunnerKey("p", "r-1");
    withJournal(
        store,
        j -> {
          for (String task : List.of("T-1", "T-2", "T-3")) {
            j.appendAll(life(runner, task, 3, false));
          }
          return null;
        });
    Set<String> started =
        withJournal(
            store,
            j -> {
              j.prepare("p", List.of("T-1", "T-2"));
              ActorSystem<?> system = j.system();
              TestProbe<CurrentShardRegionState> probe = TestProbe.create(system);
              return probe.awaitAssert(
                  Duration.ofSeconds(15),
                  () -> {
                    ClusterSharding.get(system)
                        .shardState()
                        .tell(new GetShardRegionState(TaskEntity.KEY, probe.ref()));
                    Set<String> ids = new TreeSet<>();
                    probe
                        .receiveMessage()
                        .getShards()
                        .forEach(shard -> ids.addAll(shard.getEntityIds()));
                    assertEquals(2, ids.size(), "started: " + ids);
                    return ids;
                  });
            });
    assertEquals(
        new TreeSet<>(List.of(TaskEntity.entityId("p", "T-1"), TaskEntity.entityId("p", "T-2"))),
        started);
  }

  /**
   * A write's frames of one task are one row of the store (an insert, not a hundred), and every
   * reader still gets them one by one: the whole history, the restore, and the task's events with
   * their ids.
   */
  @Test
  void framesWrittenTogetherAreOneRowAndEveryReaderGetsThemOneByOne() throws Exception {
    HubStore store = freshStore();
    RunnerKey runner = new RunnerKey("p", "r-1");
    List<Entry> life = life(runner, "T-1", 100, true);
    List<Long> ids =
        withJournal(
            store,
            j -> {
              j.append(life.get(0));
              j.appendAll(life.subList(1, life.size()));
              JdbcReadJournal reads =
                  PersistenceQuery.get(j.system())
                      .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
              String pid = TaskEntity.KEY.name() + "|" + TaskEntity.entityId("p", "T-1");
              return TaskEventStream.current(reads, pid)
                  .map(TaskEntry::id)
                  .runWith(Sink.seq(), j.system())
                  .toCompletableFuture()
                  .orTimeout(20, TimeUnit.SECONDS)
                  .join();
            });
    assertEquals(LongStream.rangeClosed(1, 101).boxed().toList(), ids);
    try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
        ResultSet rows =
            c.createStatement().executeQuery("SELECT COUNT(*) FROM \"event_journal\"")) {
      rows.next();
      assertEquals(2, rows.getInt(1), "the assign's row, then one for the 101 frames after it");
    }
    assertSameEntries(life, withJournal(store, PersistentHubJournal::recorded));
    assertEquals(
        List.of("task.assign/1", "task.progress/100", "task.report/1"),
        withJournal(store, PersistentHubJournal::restorable).stream()
            .map(e -> e.frame().type() + "/" + e.folded())
            .toList());
  }

  /** A task's assign, {@code progress} progress frames and (if {@code report}) its report. */
  static List<Entry> life(RunnerKey runner, String task, int progress, boolean report) {
    List<Entry> h = JournalHistory.of(runner, task);
    List<Entry> out = new ArrayList<>();
    out.add(h.get(0));
    TaskProgress p = (TaskProgress) h.get(1).frame();
    for (int seq = 1; seq <= progress; seq++) {
      out.add(new Entry(runner, Direction.APPLIED, p.withSeq(seq)));
    }
    if (report) {
      out.add(new Entry(runner, Direction.APPLIED, h.get(3).frame().withSeq(progress + 1)));
    }
    return out;
  }

  /** Opens a journal on a fresh actor system over {@code store}, runs {@code body}, terminates. */
  static <T> T withJournal(HubStore store, Function<PersistentHubJournal, T> body) {
    ActorTestKit kit =
        ActorTestKit.create(
            "journal",
            store
                .pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    try {
      ActorSystem<?> system = kit.system();
      return body.apply(PersistentHubJournal.open(system, TIMEOUT));
    } finally {
      kit.shutdownTestKit();
    }
  }

  static void assertSameEntries(List<Entry> expected, List<Entry> actual) {
    assertEquals(expected.size(), actual.size(), "entries: " + actual);
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i).runner(), actual.get(i).runner());
      assertEquals(expected.get(i).direction(), actual.get(i).direction());
      assertEquals(
          CODEC.encodeToString(expected.get(i).frame()),
          CODEC.encodeToString(actual.get(i).frame()));
    }
  }
}
