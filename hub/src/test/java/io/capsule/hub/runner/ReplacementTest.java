package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A runner gone longer than {@code dead-after} has its unfinished task placed again, over real
 * sockets and a real (in-memory H2) store, as the task's next attempt (wire id {@code
 * t-1~attempt-2}): on runner B, which finishes it, or on A itself once it is back with a free slot.
 * The task's events show both attempts' with ids that run on (a {@code Last-Event-ID} from the
 * first resumes into the second), and one report. A, back, is told to cancel the first attempt, and
 * what it still sends for it is refused ({@code E-PRO-011}), not applied.
 */
class ReplacementTest {
  private static final String PROJECT = "p-again";
  private static final FrameCodec CODEC = FrameCodec.shared();

  /** What runners know the second attempt of t-1 by. */
  static final String WIRE_2 = "t-1~attempt-2";

  private final HubStore store = HubStore.memory();
  private final ActorTestKit kit =
      ActorTestKit.create(
          "again",
          store
              .pekkoConfig()
              .withFallback(HubCluster.singleNode())
              .withFallback(ConfigFactory.load()));
  private ReferenceHub hub;
  private HubCalls api;
  private TaskWatch watch;

  @BeforeEach
  void start() throws Exception {
    store.migrate();
    hub =
        WsFixture.hub(
            kit.system(),
            PROJECT,
            Duration.ofSeconds(2),
            PersistentHubJournal.open(kit.system(), Duration.ofSeconds(20)));
    api = new HubCalls(PROJECT, hub::apiUrl);
    watch = new TaskWatch(api);
  }

  @AfterEach
  void stop() throws Exception {
    if (watch != null) {
      watch.close();
    }
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
  }

  @Test
  void aTaskOfARunnerGonePastDeadAfterRunsOnAnotherAndKeepsItsEvents() throws Exception {
    WsFixture.RawPeer a = runner("r-a", "{}");
    HttpResponse<String> submitted =
        api.submit("{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}");
    assertEquals(201, submitted.statusCode(), submitted.body());
    WsFixture.await(a.received, s -> s.contains("task.assign"));
    a.send(progress("t-1", 1, "a"));
    a.send(progress("t-1", 2, "a"));
    awaitTask(t -> t.get("events").asInt() == 2);

    a.cut(); // and not back within dead-after
    JsonNode queued = awaitTask(t -> "queued".equals(t.get("state").asText()));
    assertTrue(queued.get("waiting").asText().contains("E-HUB-008"), queued.toString());
    assertTrue(queued.get("runner").isNull(), queued.toString());

    WsFixture.RawPeer b = runner("r-b", "{}");
    String assign = WsFixture.await(b.received, s -> s.contains("task.assign"));
    assertTrue(assign.contains("\"" + WIRE_2 + "\""), assign); // its second attempt
    b.send(progress(WIRE_2, 1, "b"));
    b.send(report(WIRE_2, 2));
    JsonNode done = awaitTask(t -> "done".equals(t.get("state").asText()));
    assertEquals(PROJECT + "/r-b", done.get("runner").asText(), done.toString());
    assertEquals(2, done.get("attempt").asInt(), done.toString());
    assertEquals(WIRE_2, done.get("attempt_id").asText(), done.toString());

    BlockingQueue<String> all = watch.watch("t-1", Optional.empty());
    assertEquals(
        List.of("id:1 text a", "id:2 text a", "id:3 text b", "id:4 report done"),
        TaskWatch.events(all, 4));
    BlockingQueue<String> resumed = watch.watch("t-1", Optional.of("2"));
    assertEquals(List.of("id:3 text b", "id:4 report done"), TaskWatch.events(resumed, 2));

    // A comes back, having applied the assign (hub seq 1): it hears the cancel, and what it
    // still sends for the task is refused, nothing applied.
    WsFixture.RawPeer back = runner("r-a", "{\"t-1\":1}");
    String cancel = WsFixture.await(back.received, s -> s.contains("task.cancel"));
    assertTrue(cancel.contains("\"t-1\"") && cancel.contains("E-HUB-008"), cancel);
    back.send(report("t-1", 3));
    String refused = WsFixture.await(back.received, s -> s.contains("\"type\":\"error\""));
    assertTrue(
        refused.contains("E-PRO-011") && refused.contains("nothing of it was applied"), refused);
    JsonNode after = task();
    assertEquals(4, after.get("events").asInt(), after.toString());
    assertEquals("done", after.get("report").get("status").asText(), after.toString());
  }

  @Test
  void theSameRunnerBackAfterDeadAfterRunsTheTaskAgainAsANewAttempt() throws Exception {
    WsFixture.RawPeer a = runner("r-a", "{}");
    assertEquals(
        201, api.submit("{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}").statusCode());
    WsFixture.await(a.received, s -> s.contains("task.assign"));
    a.send(progress("t-1", 1, "a"));
    awaitTask(t -> t.get("events").asInt() == 1);
    a.cut(); // and not back within dead-after
    JsonNode queued = awaitTask(t -> "queued".equals(t.get("state").asText()));
    assertTrue(queued.get("waiting").asText().contains("E-HUB-008"), queued.toString());

    // Back after dead-after, having applied the assign (hub seq 1): it hears the old run's cancel,
    // then the task again under its second attempt's wire id, in its free slot.
    WsFixture.RawPeer back = runner("r-a", "{\"t-1\":1}");
    String cancel = WsFixture.await(back.received, s -> s.contains("task.cancel"));
    assertTrue(cancel.contains("\"t-1\"") && cancel.contains("E-HUB-008"), cancel);
    String assign = WsFixture.await(back.received, s -> s.contains("task.assign"));
    assertTrue(assign.contains("\"" + WIRE_2 + "\""), assign);
    JsonNode running = awaitTask(t -> "assigned".equals(t.get("state").asText()));
    assertEquals(PROJECT + "/r-a", running.get("runner").asText(), running.toString());
    assertEquals("t-1", running.get("task").get("id").asText(), "the API shows the task's own id");

    // The old run's late frame is refused, nothing applied; the new attempt's are the task's.
    back.send(progress("t-1", 2, "a-late"));
    String refused = WsFixture.await(back.received, s -> s.contains("\"type\":\"error\""));
    assertTrue(
        refused.contains("E-PRO-011") && refused.contains("nothing of it was applied"), refused);
    back.send(progress(WIRE_2, 1, "a-again"));
    back.send(report(WIRE_2, 2));
    JsonNode done = awaitTask(t -> "done".equals(t.get("state").asText()));
    assertEquals(3, done.get("events").asInt(), done.toString());
    assertEquals("t-1", done.get("report").get("task_id").asText(), done.toString());

    BlockingQueue<String> all = watch.watch("t-1", Optional.empty());
    assertEquals(
        List.of("id:1 text a", "id:2 text a-again", "id:3 report done"), TaskWatch.events(all, 3));
    BlockingQueue<String> resumed = watch.watch("t-1", Optional.of("1"));
    assertEquals(List.of("id:2 text a-again", "id:3 report done"), TaskWatch.events(resumed, 2));

    // A second report of either attempt changes nothing: the task has its one report.
    back.send(report("t-1", 3));
    WsFixture.await(back.received, s -> s.contains("E-PRO-011"));
    JsonNode after = task();
    assertEquals(3, after.get("events").asInt(), after.toString());
    assertEquals("done", after.get("report").get("status").asText(), after.toString());
  }

  @Test
  void anIdEndingLikeAnAttemptsWireIdIsRefusedAtSubmit() throws Exception {
    HttpResponse<String> r =
        api.submit("{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"" + WIRE_2 + "\"}");
    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains("$.id") && r.body().contains("~attempt-"), r.body());
  }

  /** A runner with the capsule that answers pings; {@code resume} is its hello.resume. */
  private WsFixture.RawPeer runner(String id, String resume) throws Exception {
    return WsFixture.helloRunner(kit.system(), hub.runnerUrl(), PROJECT, id, resume);
  }

  private JsonNode task() throws Exception {
    return api.task("t-1");
  }

  private JsonNode awaitTask(Predicate<JsonNode> match) throws Exception {
    return api.awaitTask("t-1", match);
  }

  /** {@code id} is the id the runner knows the run by: the task's, or its attempt's wire id. */
  static String progress(String id, long seq, String who) {
    return CODEC.encodeToString(
        new TaskProgress(id, "text", JsonNodeFactory.instance.objectNode().put("who", who))
            .withSeq(seq));
  }

  static String report(String id, long seq) {
    return CODEC.encodeToString(
        new TaskReport(TaskReportBody.builder(id, "done", new UsageSplit(1, 2, 3, 4, 5)).build())
            .withSeq(seq));
  }
}
