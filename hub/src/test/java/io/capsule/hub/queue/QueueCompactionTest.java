package io.capsule.hub.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The project's queue entity on a real store (H2 file): after many tasks went through the queue,
 * the store holds a snapshot and fewer events than were written (older ones are deleted), and a
 * node started on the same store reads back exactly what still matters: the waiting, the canceled
 * and the deleted ones.
 */
class QueueCompactionTest {
  private static final String PROJECT = "p-compact";
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private final List<ActorTestKit> nodes = new ArrayList<>();

  @TempDir Path state;

  @AfterEach
  void stop() {
    nodes.forEach(ActorTestKit::shutdownTestKit);
  }

  private ActorTestKit node(String name) {
    HubStore store = HubStore.h2File(state);
    store.migrate();
    ActorTestKit node =
        ActorTestKit.create(
            name,
            store
                .pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    nodes.add(node);
    PersistentHubJournal.open(node.system(), TIMEOUT); // joins the cluster of one
    return node;
  }

  @Test
  void aBusyQueueIsCompactedAndReadBackWithWhatStillMatters() throws Exception {
    ActorTestKit first = node("first");
    QueueStore store = PersistentQueueStore.open(first.system(), PROJECT, TIMEOUT);
    int tasks = 300; // 600 events, then 4: snapshots at 100, 200, ... 600
    for (int i = 0; i < tasks; i++) {
      String id = "t-" + i;
      await(store.append(QueueEvent.queued(id, "alpha", "", "agent", "{}", "{}")));
      await(store.append(QueueEvent.left(QueueEvent.Kind.PLACED, id)));
    }
    await(store.append(QueueEvent.queued("t-wait", "alpha", "r-1", "agent", "{}", "{}")));
    await(store.append(QueueEvent.queued("t-cancel", "alpha", "", "agent", "{}", "{}")));
    await(store.append(QueueEvent.left(QueueEvent.Kind.CANCELED, "t-cancel")));
    await(store.append(QueueEvent.left(QueueEvent.Kind.FORGOTTEN, "t-7")));

    // Deleting older events follows the snapshot asynchronously: read until it happened (bounded).
    JdbcReadJournal reads =
        PersistenceQuery.get(first.system())
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    int kept;
    do {
      kept =
          reads
              .currentEventsByPersistenceId(
                  QueueEntity.KEY.name() + "|" + PROJECT, 0, Long.MAX_VALUE)
              .runWith(Sink.seq(), first.system())
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS)
              .size();
      // Two snapshots are kept, and the events after the older one: at most three intervals.
    } while (kept > 3 * QueueEntity.SNAPSHOT_EVERY && System.nanoTime() < deadline);
    assertTrue(
        kept <= 3 * QueueEntity.SNAPSHOT_EVERY,
        kept + " of " + (2 * tasks + 4) + " events still stored");
    first.shutdownTestKit();

    ActorTestKit second = node("second");
    List<QueueEvent> read = PersistentQueueStore.open(second.system(), PROJECT, TIMEOUT).recorded();
    assertEquals(
        List.of("QUEUED t-wait r-1", "QUEUED t-cancel ", "CANCELED t-cancel ", "FORGOTTEN t-7 "),
        read.stream().map(e -> e.kind() + " " + e.taskId() + " " + e.runner()).toList());
  }

  private static void await(java.util.concurrent.CompletionStage<?> s) throws Exception {
    CompletableFuture<?> f = s.toCompletableFuture();
    f.get(20, TimeUnit.SECONDS);
  }
}
