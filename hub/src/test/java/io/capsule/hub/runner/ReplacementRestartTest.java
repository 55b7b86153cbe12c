package io.capsule.hub.runner;

import static io.capsule.hub.runner.ReplacementTest.WIRE_2;
import static io.capsule.hub.runner.ReplacementTest.progress;
import static io.capsule.hub.runner.ReplacementTest.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task's second attempt survives hub restarts on the same store (an H2 file), which is how the
 * brain also restores when it moves to another node: the first hub takes the task from runner A,
 * gone past {@code dead-after}, and stops before A is back; the second rebuilds the take-back from
 * its journal and runs the task again on A, back, as {@code t-1~attempt-2}; the third, started
 * while that attempt runs, finds it placed (it does not take it back once more nor start a third
 * attempt) and applies its report. Every event once, ids running on, one report.
 */
class ReplacementRestartTest {
  private static final String PROJECT = "p-again";

  private final ActorTestKit kit = ActorTestKit.create();
  private final List<ActorTestKit> nodes = new ArrayList<>();
  private ReferenceHub hub;
  private final HubCalls api = new HubCalls(PROJECT, () -> hub.apiUrl());
  private final TaskWatch watch = new TaskWatch(api);

  @TempDir Path state;

  @AfterEach
  void stop() throws Exception {
    watch.close();
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
    nodes.forEach(ActorTestKit::shutdownTestKit);
  }

  @Test
  void aTaskTakenBackBeforeARestartRunsAgainOnItsRunnerAfterIt() throws Exception {
    ActorTestKit first = startOn(Duration.ofSeconds(2));
    WsFixture.RawPeer a = runner("{}");
    assertEquals(
        201, api.submit("{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}").statusCode());
    WsFixture.await(a.received, s -> s.contains("task.assign"));
    a.send(progress("t-1", 1, "a"));
    api.awaitTask("t-1", t -> t.get("events").asInt() == 1);
    a.cut(); // and not back within dead-after
    api.awaitTask("t-1", t -> "queued".equals(t.get("state").asText()));

    restart(first, Duration.ofSeconds(2));
    JsonNode queued = api.awaitTask("t-1", t -> "queued".equals(t.get("state").asText()));
    assertTrue(queued.get("waiting").asText().contains("E-HUB-008"), queued.toString());
    assertEquals(1, queued.get("events").asInt(), queued.toString());
    assertEquals(1, queued.get("attempt").asInt(), "the attempt taken back: " + queued);

    WsFixture.RawPeer back = runner("{\"t-1\":1}");
    String cancel = WsFixture.await(back.received, s -> s.contains("task.cancel"));
    assertTrue(cancel.contains("\"t-1\"") && cancel.contains("E-HUB-008"), cancel);
    String assign = WsFixture.await(back.received, s -> s.contains("task.assign"));
    assertTrue(assign.contains("\"" + WIRE_2 + "\""), assign);
    back.send(progress(WIRE_2, 1, "a-again"));
    api.awaitTask("t-1", t -> t.get("events").asInt() == 2);
    back.cut();

    // A long dead-after now: the third hub must find the attempt placed, not take it back.
    restart(nodes.get(nodes.size() - 1), Duration.ofSeconds(60));
    JsonNode placed = api.task("t-1");
    assertEquals("assigned", placed.get("state").asText(), placed.toString());
    assertEquals(PROJECT + "/r-a", placed.get("runner").asText(), placed.toString());
    assertEquals(2, placed.get("events").asInt(), placed.toString());
    // Which attempt runs is read back from the journal's assign, not kept beside it.
    assertEquals(2, placed.get("attempt").asInt(), placed.toString());
    assertEquals(WIRE_2, placed.get("attempt_id").asText(), placed.toString());

    WsFixture.RawPeer again = runner("{\"t-1\":2,\"" + WIRE_2 + "\":1}");
    again.send(report(WIRE_2, 2));
    JsonNode done = api.awaitTask("t-1", t -> "done".equals(t.get("state").asText()));
    assertEquals(3, done.get("events").asInt(), done.toString());
    assertEquals("t-1", done.get("report").get("task_id").asText(), done.toString());
    assertEquals(
        List.of("id:1 text a", "id:2 text a-again", "id:3 report done"),
        TaskWatch.events(watch.watch("t-1", Optional.empty()), 3));
    assertFalse(
        again.received.stream().anyMatch(s -> s.contains("task.assign")),
        "no further attempt: " + again.received);
  }

  /** A store node on the H2 file under {@link #state}, and a hub journaling there. */
  private ActorTestKit startOn(Duration deadAfter) throws Exception {
    ActorTestKit node = WsFixture.storeNode(HubStore.h2File(state));
    nodes.add(node);
    hub =
        WsFixture.hub(
            kit.system(),
            PROJECT,
            deadAfter,
            PersistentHubJournal.open(node.system(), Duration.ofSeconds(20)));
    return node;
  }

  /** Stops the hub and its store node, then starts both again on the same file. */
  private void restart(ActorTestKit node, Duration deadAfter) throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    hub = null;
    node.shutdownTestKit();
    startOn(deadAfter);
  }

  /** Runner r-a with the capsule and one slot, answering pings; {@code resume} its hello.resume. */
  private WsFixture.RawPeer runner(String resume) throws Exception {
    return WsFixture.helloRunner(kit.system(), hub.runnerUrl(), PROJECT, "r-a", resume);
  }
}
