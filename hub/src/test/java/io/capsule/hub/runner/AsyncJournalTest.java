package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hub never waits for its store on its actor: while one task's write is stalled, another
 * runner's frames are kept, published and acked; the stalled task's frames are neither published
 * nor acked until their write completes, and what arrived for it meanwhile goes to the store as one
 * batch. Two raw runners on a real socket; the store is an in-memory journal whose writes of one
 * task the test holds (a store that stalls on demand cannot be had from a real database).
 */
class AsyncJournalTest {
  private static final String PROJECT = "p-async";
  private final ActorTestKit kit = ActorTestKit.create();

  /** Holds writes of task SLOW until released; every write is recorded in order. */
  private static final class Gated implements HubJournal {
    final HubJournal kept = HubJournal.inMemory();
    final List<List<Long>> slowWrites = new ArrayList<>();
    final BlockingQueue<Runnable> held = new LinkedBlockingQueue<>();

    @Override
    public List<Entry> recorded() {
      return kept.recorded();
    }

    @Override
    public void append(Entry entry) {
      kept.append(entry);
    }

    @Override
    public synchronized CompletionStage<Done> appendAllAsync(List<Entry> entries) {
      boolean slow = entries.get(0).frame().taskId().equals("SLOW");
      if (!slow || entries.get(0).direction() == Direction.SENT) {
        return HubJournal.super.appendAllAsync(entries);
      }
      slowWrites.add(entries.stream().map(e -> e.frame().seq()).toList());
      CompletableFuture<Done> done = new CompletableFuture<>();
      held.add(
          () -> {
            kept.appendAll(entries);
            done.complete(Done.getInstance());
          });
      return done;
    }

    synchronized List<List<Long>> slowWrites() {
      return List.copyOf(slowWrites);
    }

    @Override
    public void close() {}
  }

  @AfterEach
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void aStalledWriteHoldsBackOnlyItsOwnTask() throws Exception {
    Gated journal = new Gated();
    HubServer hub =
        HubServer.create(kit.system(), WsFixture.fast().build(), WsFixture.TOKENS, journal)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    hub.events().runWith(Sink.foreach(events::add), kit.system());
    try {
      WsFixture.RawPeer a = new WsFixture.RawPeer(kit.system(), hub.url(), token(PROJECT, "a"));
      WsFixture.RawPeer b = new WsFixture.RawPeer(kit.system(), hub.url(), token(PROJECT, "b"));
      a.send(hello(PROJECT, Capabilities.ACK));
      b.send(hello(PROJECT, Capabilities.ACK));
      await(events, e -> e instanceof HubEvent.RunnerUp);
      await(events, e -> e instanceof HubEvent.RunnerUp);
      assign(hub, "a", "SLOW");
      assign(hub, "b", "FAST");

      a.send(progress("SLOW", 1));
      for (long seq = 1; seq <= 3; seq++) {
        b.send(progress("FAST", seq));
      }
      List<HubEvent> seen = new ArrayList<>();
      await(events, e -> isProgress(e, "FAST", 3), seen);
      assertTrue(seen.stream().noneMatch(e -> isProgress(e, "SLOW", 1)), seen.toString());
      await(b.received, t -> t.contains("\"type\":\"ack\"") && t.contains("\"FAST\":3"));

      a.send(progress("SLOW", 2));
      a.send(progress("SLOW", 3));
      b.send(progress("FAST", 4));
      await(events, e -> isProgress(e, "FAST", 4));
      assertTrue(
          a.received.stream().noneMatch(t -> t.contains("\"SLOW\":")),
          "nothing of SLOW acked before it is kept: " + a.received);

      journal.held.poll(20, TimeUnit.SECONDS).run(); // SLOW 1 is kept
      for (long seq = 1; seq <= 3; seq++) {
        long want = seq;
        if (seq == 2) {
          journal.held.poll(20, TimeUnit.SECONDS).run(); // 2 and 3, written together
        }
        HubEvent.Progress p =
            (HubEvent.Progress) await(events, e -> e instanceof HubEvent.Progress);
        assertEquals("SLOW", p.progress().taskId());
        assertEquals(want, p.progress().seq());
      }
      assertEquals(List.of(List.of(1L), List.of(2L, 3L)), journal.slowWrites());
      await(a.received, t -> t.contains("\"type\":\"ack\"") && t.contains("\"SLOW\":3"));
    } finally {
      hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  private static boolean isProgress(HubEvent e, String task, long seq) {
    return e instanceof HubEvent.Progress p
        && p.progress().taskId().equals(task)
        && p.progress().seq() == seq;
  }

  private static void assign(HubServer hub, String runner, String task) throws Exception {
    hub.assign(
            new RunnerKey(PROJECT, runner),
            TaskSpec.builder(task, "feature", "async").build(),
            "agent",
            Invocation.builder("capsule:x").build())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
  }

  private static String progress(String task, long seq) {
    return "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\""
        + task
        + "\",\"seq\":"
        + seq
        + ",\"kind\":\"text\",\"payload\":{}}";
  }
}
