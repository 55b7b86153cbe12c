package io.capsule.hub.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.JournalHistory;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.hub.task.TaskEntity;
import io.capsule.hub.task.TaskRow;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Erasing a task entity's journal through Pekko Persistence, on a real (in-memory H2) store: the
 * task's events are gone from what Persistence Query reads (what a restart replays), another task's
 * stay, and a reopened journal does not hold the erased task.
 */
class JournalEraserTest {
  private final HubStore store = HubStore.memory();
  private final ActorTestKit kit =
      ActorTestKit.create(
          "erase",
          store
              .pekkoConfig()
              .withFallback(HubCluster.singleNode())
              .withFallback(ConfigFactory.load()));

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aTasksEventsAndSnapshotsAreErasedAndAnotherTasksStay() throws Exception {
    store.migrate();
    PersistentHubJournal journal = PersistentHubJournal.open(kit.system(), Duration.ofSeconds(20));
    RunnerKey runner = new RunnerKey("p", "r-1");
    journal.appendAll(JournalHistory.of(runner, "T-gone"));
    journal.appendAll(JournalHistory.of(runner, "T-kept"));
    assertEquals(4, stored("T-gone"));

    JournalEraser.erase(kit.system(), pid("T-gone"), Duration.ofSeconds(20))
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);

    assertEquals(0, stored("T-gone"));
    assertEquals(4, stored("T-kept"));
    assertEquals(
        4,
        journal.reopen().recorded().size(),
        "a restart reads only the kept task: " + journal.reopen().recorded());
  }

  private static String pid(String task) {
    return TaskEntity.KEY.name() + "|" + TaskEntity.entityId("p", task);
  }

  /** The task's frames that Persistence Query reads (its rows may hold several: TaskRow). */
  private int stored(String task) throws Exception {
    JdbcReadJournal reads =
        PersistenceQuery.get(kit.system())
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    return reads
        .currentEventsByPersistenceId(pid(task), 0L, Long.MAX_VALUE)
        .runWith(Sink.seq(), kit.system())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS)
        .stream()
        .mapToInt(e -> ((TaskRow) e.event()).events().size())
        .sum();
  }
}
