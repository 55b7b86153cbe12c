package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.runner.WsFixture.RawPeer;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.ws.Disconnect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A runner away past {@code dead-after} is reported with its unfinished tasks ({@link
 * HubEvent.RunnerGone}); placed again on another runner, the task starts over there (its assign is
 * seq 1) while the old run's events stay in the journal; the old runner, back later, is not sent
 * the task again and its frames for it are refused ({@code E-PRO-011}). A hub restarted on the same
 * journal restores the same ownership. Real sockets, the journal in a real (in-memory H2) store.
 */
class ReplacementTest {
  private static final String PROJECT = "p-replace";
  private static final FrameCodec CODEC = FrameCodec.shared();

  private final HubStore store = HubStore.memory();
  private final ActorTestKit kit =
      ActorTestKit.create(
          "replace",
          store
              .pekkoConfig()
              .withFallback(HubCluster.singleNode())
              .withFallback(ConfigFactory.load()));
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void shutdown() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    kit.shutdownTestKit();
  }

  private HubServer start(BlockingQueue<HubEvent> events) throws Exception {
    HubServer hub =
        HubServer.create(
                kit.system(),
                // 8 s: these raw peers send nothing unasked, so dead-after also cuts idle ones;
                // the first placement starts the store's shard, seconds on a loaded machine.
                WsFixture.fast().deadAfter(Duration.ofSeconds(8)).build(),
                WsFixture.TOKENS,
                PersistentHubJournal.open(kit.system(), Duration.ofSeconds(20)))
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    open.add(() -> hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS));
    hub.events().runWith(Sink.foreach(events::add), kit.system());
    return hub;
  }

  @Test
  void aTaskOfARunnerGonePastDeadAfterIsPlacedAgainAndTheOldRunnerLosesIt() throws Exception {
    store.migrate();
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    HubServer hub = start(events);
    RunnerKey a = new RunnerKey(PROJECT, "r-a");
    RunnerKey b = new RunnerKey(PROJECT, "r-b");

    RawPeer first = peer(hub, a, events);
    assign(hub, a);
    await(first.received, s -> s.contains("\"task.assign\""));
    first.send(CODEC.encodeToString(progress(1)));
    first.send(CODEC.encodeToString(progress(2)));
    await(events, e -> e instanceof HubEvent.Progress p && p.progress().seq() == 2);
    hub.disconnect(a, Disconnect.CLOSE).toCompletableFuture().get(20, TimeUnit.SECONDS);

    HubEvent.RunnerGone gone =
        (HubEvent.RunnerGone) await(events, e -> e instanceof HubEvent.RunnerGone);
    assertEquals(a, gone.runner());
    assertEquals(Set.of("T"), gone.openTasks());

    RawPeer second = peer(hub, b, events);
    assertEquals(1, assign(hub, b), "placed again, the task's seqs start over");
    await(second.received, s -> s.contains("\"task.assign\""));
    second.send(CODEC.encodeToString(progress(1)));
    second.send(CODEC.encodeToString(report(2)));
    HubEvent.Report done = (HubEvent.Report) await(events, e -> e instanceof HubEvent.Report);
    assertEquals(b, done.runner());
    assertTrue(hub.runners(PROJECT).stream().allMatch(r -> r.openTasks().isEmpty()));

    RawPeer back = peer(hub, a, events);
    back.send(CODEC.encodeToString(progress(3)));
    List<String> before = new ArrayList<>();
    String error = await(back.received, s -> s.contains("\"type\":\"error\""), before);
    // The task is finished on r-b by now, so it is no open task of the project at all.
    assertTrue(error.contains("E-PRO-011") && error.contains("nothing of it was applied"), error);
    assertTrue(
        before.stream().noneMatch(s -> s.contains("task.assign")),
        "the old runner is not sent the task again: " + before);

    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    BlockingQueue<HubEvent> events2 = new LinkedBlockingQueue<>();
    HubServer restarted = start(events2);
    assertTrue(
        restarted.runners(PROJECT).stream().allMatch(r -> r.openTasks().isEmpty()),
        "restored: nothing open on either runner: " + restarted.runners(PROJECT));
  }

  private RawPeer peer(HubServer hub, RunnerKey key, BlockingQueue<HubEvent> events)
      throws Exception {
    RawPeer p = new RawPeer(kit.system(), hub.url(), token(PROJECT, key.runnerId()));
    p.send(hello(PROJECT, "error-frames"));
    await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().equals(key));
    return p;
  }

  private static long assign(HubServer hub, RunnerKey key) throws Exception {
    return hub.assign(
            key,
            TaskSpec.builder("T", "feature", "count").build(),
            "agent",
            Invocation.builder("capsule:hello").build())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS)
        .seq();
  }

  private static TaskProgress progress(long seq) {
    return new TaskProgress("T", "text", JsonNodeFactory.instance.objectNode().put("delta", "d"))
        .withSeq(seq);
  }

  private static TaskReport report(long seq) {
    return new TaskReport(
            TaskReportBody.builder("T", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
        .withSeq(seq);
  }
}
