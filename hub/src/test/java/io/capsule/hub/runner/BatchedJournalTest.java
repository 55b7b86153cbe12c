package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskSpec;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What one runner frame applies is journaled in one write: when seq 1 fills the gap below held seqs
 * 2 and 3, the three frames reach the journal as one batch (one round trip to the store), before
 * any of them is published.
 */
class BatchedJournalTest {
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void framesAFilledGapReleasesAreJournaledAsOneBatch() throws Exception {
    List<List<HubJournal.Entry>> writes = new CopyOnWriteArrayList<>();
    HubJournal counting =
        new HubJournal() {
          @Override
          public List<Entry> recorded() {
            return List.of();
          }

          @Override
          public void append(Entry entry) {
            appendAll(List.of(entry));
          }

          @Override
          public void appendAll(List<Entry> entries) {
            writes.add(List.copyOf(entries));
          }

          @Override
          public void close() {}
        };
    HubServer hub =
        HubServer.create(kit.system(), WsFixture.fast().build(), WsFixture.TOKENS, counting)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    hub.events().runWith(Sink.foreach(events::add), kit.system());
    try {
      WsFixture.RawPeer p = new WsFixture.RawPeer(kit.system(), hub.url(), token("p-batch", "r"));
      p.send(hello("p-batch"));
      await(events, e -> e instanceof HubEvent.RunnerUp);
      hub.assign(
              new RunnerKey("p-batch", "r"),
              TaskSpec.builder("T", "feature", "batch").build(),
              "agent",
              Invocation.builder("capsule:x").build())
          .toCompletableFuture()
          .get(20, TimeUnit.SECONDS);
      for (long seq : new long[] {3, 2, 1}) {
        p.send(
            "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":"
                + seq
                + ",\"kind\":\"text\",\"payload\":{}}");
      }
      for (long seq = 1; seq <= 3; seq++) {
        HubEvent.Progress e =
            (HubEvent.Progress) await(events, x -> x instanceof HubEvent.Progress);
        assertEquals(seq, e.progress().seq());
      }
      assertEquals(2, writes.size(), "the assign, then one batch: " + writes);
      assertEquals(List.of(1L, 2L, 3L), writes.get(1).stream().map(w -> w.frame().seq()).toList());
    } finally {
      hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }
}
