package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.hub.task.TaskEntity;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenScope;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code capsule.hub.retention} on a real store (H2 file): a finished task is forgotten once its
 * retention passed (here 1 ms, so at the first sweep, a second after start), its events and
 * snapshots are erased from the store (a restart has nothing of it to replay), and it stays
 * forgotten after a restart; a task still running at that sweep is kept.
 */
class RetentionTest {
  private static final String PROJECT = "p-retention";
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ActorTestKit kit =
      ActorTestKit.create(
          ConfigFactory.parseString("capsule.hub.retention = 1ms")
              .withFallback(ConfigFactory.load()));
  private final HubCalls api = new HubCalls(PROJECT, () -> this.hub.apiUrl());
  private final List<ActorTestKit> nodes = new ArrayList<>();
  private ReferenceHub hub;

  @TempDir Path state;

  @AfterEach
  void stop() throws Exception {
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
    nodes.forEach(ActorTestKit::shutdownTestKit);
  }

  private ActorTestKit storeNode() {
    HubStore store = HubStore.h2File(state);
    store.migrate();
    ActorTestKit node =
        ActorTestKit.create(
            "store",
            store
                .pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    nodes.add(node);
    return node;
  }

  private void startOn(ActorTestKit node) throws Exception {
    hub =
        ReferenceHub.start(
                kit.system(),
                // The raw runner answers no ping: a long dead-after keeps it while the store warms.
                WsFixture.fast().deadAfter(Duration.ofSeconds(60)).build(),
                WsFixture.TOKENS,
                PROJECT,
                "127.0.0.1",
                0,
                PersistentHubJournal.open(node.system(), Duration.ofSeconds(20)))
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
  }

  private HttpResponse<String> send(String method, String path, String body) throws Exception {
    return api.send(TokenScope.API, method, path, body);
  }

  /** How many events the store holds for the task (Persistence Query, as a restart reads it). */
  private static int stored(ActorTestKit node, String taskId) throws Exception {
    JdbcReadJournal reads =
        PersistenceQuery.get(node.system())
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    String pid = TaskEntity.KEY.name() + "|" + TaskEntity.entityId(PROJECT, taskId);
    return reads
        .currentEventsByPersistenceId(pid, 0L, Long.MAX_VALUE)
        .runWith(Sink.seq(), node.system())
        .toCompletableFuture()
        .get(WsFixture.WAIT.toSeconds(), TimeUnit.SECONDS)
        .size();
  }

  private static void awaitStored(ActorTestKit node, String taskId, int n) throws Exception {
    long deadline = System.nanoTime() + WsFixture.WAIT.toNanos();
    int now = stored(node, taskId);
    while (now != n) {
      assertTrue(System.nanoTime() < deadline, taskId + " has " + now + " events stored, not " + n);
      now = stored(node, taskId);
    }
  }

  @Test
  void aFinishedTaskIsForgottenAfterItsRetentionAndStaysForgottenAfterARestart() throws Exception {
    ActorTestKit first = storeNode();
    startOn(first);
    WsFixture.RawPeer runner =
        new WsFixture.RawPeer(kit.system(), hub.runnerUrl(), WsFixture.token(PROJECT, "r-a"));
    runner.send(WsFixture.hello(PROJECT, "ack", "capsule:hello", "slots:2"));
    WsFixture.await(runner.received, s -> s.contains("\"type\":\"ack\""));
    for (String id : new String[] {"t-done", "t-running"}) {
      String body = "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"" + id + "\"}";
      assertEquals(201, send("POST", "/v1/tasks", body).statusCode());
      WsFixture.await(runner.received, s -> s.contains("task.assign") && s.contains(id));
    }
    runner.send(
        CODEC.encodeToString(
            new TaskReport(
                    TaskReportBody.builder("t-done", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
                .withSeq(1)));

    long deadline = System.nanoTime() + WsFixture.WAIT.toNanos();
    HttpResponse<String> done = send("GET", "/v1/tasks/t-done", null);
    while (done.statusCode() != 404) {
      assertTrue(System.nanoTime() < deadline, "t-done is still kept: " + done.body());
      done = send("GET", "/v1/tasks/t-done", null);
    }
    assertEquals("E-API-002", JSON.readTree(done.body()).get("code").asText());
    assertEquals(200, send("GET", "/v1/tasks/t-running", null).statusCode(), "still running");
    awaitStored(first, "t-done", 0); // its events and snapshots are erased from the store
    assertTrue(stored(first, "t-running") > 0, "a running task keeps its events");

    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    hub = null;
    first.shutdownTestKit();
    ActorTestKit second = storeNode();
    startOn(second);
    assertEquals(0, stored(second, "t-done"), "nothing of it to replay after the restart");
    assertEquals(404, send("GET", "/v1/tasks/t-done", null).statusCode(), "after the restart");
    HttpResponse<String> again =
        send("POST", "/v1/tasks", "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-done\"}");
    assertEquals("E-API-003", JSON.readTree(again.body()).get("code").asText(), again.body());
    assertEquals(200, send("GET", "/v1/tasks/t-running", null).statusCode());
  }
}
