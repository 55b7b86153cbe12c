package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task's journal rows are keyed by a persistence id made of the project's id and the task's (up
 * to 200 characters), in a 255-character column: the project id's own limit is what keeps every
 * task of the project storable. On a real store (H2 file).
 */
class ProjectIdLengthTest {
  private static final FrameCodec CODEC = FrameCodec.shared();
  private final ActorTestKit kit = ActorTestKit.create();
  private ActorTestKit node;
  private ReferenceHub hub;

  @TempDir Path state;

  @AfterEach
  void stop() throws Exception {
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
    if (node != null) {
      node.shutdownTestKit();
    }
  }

  private ReferenceHub start(String project) throws Exception {
    node = WsFixture.storeNode(HubStore.h2File(state));
    return ReferenceHub.start(
            kit.system(),
            WsFixture.fast().deadAfter(Duration.ofSeconds(60)).build(),
            WsFixture.TOKENS,
            project,
            "127.0.0.1",
            0,
            PersistentHubJournal.open(node.system(), Duration.ofSeconds(20)))
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
  }

  @Test
  void aTaskWithTheLongestIdRunsAndFinishesInAProjectOfTheLongestId() throws Exception {
    String project = "p".repeat(ReferenceHub.MAX_PROJECT_ID);
    String id = "t".repeat(200);
    hub = start(project);
    WsFixture.RawPeer runner =
        new WsFixture.RawPeer(kit.system(), hub.runnerUrl(), WsFixture.token(project, "r-a"));
    runner.send(WsFixture.hello(project, "ack", "capsule:hello", "slots:1"));
    WsFixture.await(runner.received, s -> s.contains("\"type\":\"ack\""));
    HubCalls api = new HubCalls(project, hub::apiUrl);
    HttpResponse<String> created =
        api.submit("{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"" + id + "\"}");
    assertEquals(201, created.statusCode(), created.body());
    WsFixture.await(runner.received, s -> s.contains("task.assign") && s.contains(id));
    runner.send(
        CODEC.encodeToString(
            new TaskReport(
                    TaskReportBody.builder(id, "done", new UsageSplit(1, 2, 3, 4, 5)).build())
                .withSeq(1)));
    WsFixture.await(runner.received, s -> s.contains("\"type\":\"ack\"") && s.contains(id));
    api.awaitTask(id, t -> t.path("state").asText().equals("done"));
  }

  @Test
  void aProjectIdTooLongForItsTasksJournalIsRefusedBeforeTheHubStarts() {
    String project = "p".repeat(ReferenceHub.MAX_PROJECT_ID + 1);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ReferenceHub.start(
                    kit.system(),
                    WsFixture.fast().build(),
                    WsFixture.TOKENS,
                    project,
                    "127.0.0.1",
                    0));
    assertTrue(
        e.getMessage().contains("at most " + ReferenceHub.MAX_PROJECT_ID + " characters"),
        e.getMessage());
  }
}
