package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A runner may send progress and a report only for a task placed on it. Two raw runners on a real
 * socket, the hub's journal in a real (in-memory H2) store: the forger gets {@code E-PRO-011} error
 * frames and keeps its connection, nothing of its frames is applied or stored, and the runner the
 * task is placed on finishes it with its own report.
 */
class OwnershipTest {
  private static final String PROJECT = "p-own";
  private static final FrameCodec CODEC = FrameCodec.shared();

  private final HubStore store = HubStore.memory();
  private final ActorTestKit kit =
      ActorTestKit.create(
          "own",
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

  @Test
  void aForgedReportAndProgressForAnotherRunnersTaskAreRefusedAndTheRealOneWins() throws Exception {
    store.migrate();
    HubServer hub =
        HubServer.create(
                kit.system(),
                WsFixture.fast().build(),
                WsFixture.TOKENS,
                PersistentHubJournal.open(kit.system(), Duration.ofSeconds(20)))
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    open.add(() -> hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS));
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    hub.events().runWith(Sink.foreach(events::add), kit.system());

    RawPeer owner = new RawPeer(kit.system(), hub.url(), token(PROJECT, "r-a"));
    owner.send(hello(PROJECT, "error-frames"));
    await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().runnerId().equals("r-a"));
    RawPeer forger = new RawPeer(kit.system(), hub.url(), token(PROJECT, "r-b"));
    forger.send(hello(PROJECT, "error-frames"));
    await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().runnerId().equals("r-b"));

    hub.assign(
            new RunnerKey(PROJECT, "r-a"),
            TaskSpec.builder("T-1", "feature", "count").build(),
            "agent",
            Invocation.builder("capsule:hello").build())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    await(owner.received, s -> s.contains("\"task.assign\""));

    forger.send(CODEC.encodeToString(progress(1, "forged")));
    forger.send(CODEC.encodeToString(report(2)));
    for (String frame : new String[] {"task.progress seq 1", "task.report seq 2"}) {
      String error = await(forger.received, s -> s.contains("\"type\":\"error\""));
      assertTrue(error.contains("E-PRO-011"), error);
      assertTrue(error.contains(frame) && error.contains("placed on runner 'r-a'"), error);
    }
    forger.send("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"still-here\"}");
    await(forger.received, s -> s.contains("still-here"));
    assertFalse(forger.closeCode.isDone(), "the forger's connection stays");

    owner.send(CODEC.encodeToString(progress(1, "real")));
    owner.send(CODEC.encodeToString(report(2)));
    List<HubEvent> seen = new ArrayList<>();
    HubEvent.Report done = (HubEvent.Report) await(events, e -> e instanceof HubEvent.Report, seen);
    assertEquals("r-a", done.runner().runnerId());
    List<HubEvent.Progress> progress =
        seen.stream()
            .filter(e -> e instanceof HubEvent.Progress)
            .map(e -> (HubEvent.Progress) e)
            .toList();
    assertEquals(1, progress.size(), "only the owner's progress: " + seen);
    assertEquals("real", progress.get(0).progress().payload().get("delta").asText());
    assertTrue(
        seen.stream().noneMatch(e -> e instanceof HubEvent.Report), "one report only: " + seen);
  }

  private static TaskProgress progress(long seq, String text) {
    return new TaskProgress("T-1", "text", JsonNodeFactory.instance.objectNode().put("delta", text))
        .withSeq(seq);
  }

  private static TaskReport report(long seq) {
    return new TaskReport(
            TaskReportBody.builder("T-1", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
        .withSeq(seq);
  }
}
