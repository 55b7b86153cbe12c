package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.queue.PersistentQueueStore;
import io.capsule.hub.queue.QueueEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenScope;
import io.capsule.protocol.ws.Disconnect;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The project's queue over real sockets: a task no runner can take now is accepted as {@code
 * queued} and placed when a report frees a slot or a runner connects (also the runner it names);
 * beyond {@code capsule.hub.queue-max} the API answers 429 with {@code Retry-After}; a cancel ends
 * a queued task at once and it is never placed; on an H2 store the queue survives a hub restart.
 */
class TaskQueueTest {
  private static final String PROJECT = "p-queue";
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final ObjectMapper JSON = new ObjectMapper();
  // queue-max 2 so the limit is reached in a few requests; the default is in reference.conf.
  private final ActorTestKit kit =
      ActorTestKit.create(
          ConfigFactory.parseString("capsule.hub.queue-max = 2\ncapsule.hub.queue-retry-after = 7s")
              .withFallback(ConfigFactory.load()));
  private final HttpClient http = HttpClient.newHttpClient();
  private final String token =
      WsFixture.TOKENS.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(5));
  private ReferenceHub hub;
  private final List<ActorTestKit> nodes = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    hub =
        ReferenceHub.start(
                kit.system(), WsFixture.fast().build(), WsFixture.TOKENS, PROJECT, "127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
    nodes.forEach(ActorTestKit::shutdownTestKit);
  }

  @Test
  void aQueueDrainsAsSlotsFree() throws Exception {
    WsFixture.RawPeer one = runner("r-one", "capsule:alpha", "slots:1");
    HttpResponse<String> first = submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-1\"}");
    assertEquals(201, first.statusCode(), first.body());
    assertEquals("assigned", JSON.readTree(first.body()).get("state").asText());
    HttpResponse<String> second = submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-2\"}");
    assertEquals(201, second.statusCode(), second.body());
    JsonNode queued = JSON.readTree(second.body());
    assertEquals("queued", queued.get("state").asText());
    assertTrue(queued.get("runner").isNull(), second.body());
    assertTrue(queued.get("waiting").asText().contains("busy"), second.body());
    assertEquals("[\"t-2\"]", ids(get("/v1/tasks?state=queued")));
    assertEquals("queued", JSON.readTree(get("/v1/tasks/t-2").body()).get("state").asText());
    assertEquals("[\"t-1\"]", ids(get("/v1/tasks?state=assigned")));
    // Exact: no case folding; a state no task is in lists nothing, it is not refused.
    assertEquals("[]", ids(get("/v1/tasks?state=QUEUED")));
    HttpResponse<String> none = get("/v1/tasks?state=no-such-state");
    assertEquals(200, none.statusCode(), none.body());
    assertEquals("[]", ids(none));

    assertTrue(WsFixture.await(one.received, s -> s.contains("task.assign")).contains("\"t-1\""));
    one.send(CODEC.encodeToString(report("t-1", 1)));

    String next = WsFixture.await(one.received, s -> s.contains("task.assign"));
    assertTrue(next.contains("\"t-2\""), next);
    JsonNode placed = JSON.readTree(get("/v1/tasks/t-2").body());
    assertEquals("assigned", placed.get("state").asText());
    assertEquals("[]", ids(get("/v1/tasks?state=queued")));
    assertEquals("[\"t-1\"]", ids(get("/v1/tasks?state=done")), "a finished task: its report's");
  }

  @Test
  void theQueuedListIsInQueueOrderNotIdOrder() throws Exception {
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-z\"}").statusCode());
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-a\"}").statusCode());
    assertEquals("[\"t-z\",\"t-a\"]", ids(get("/v1/tasks?state=queued")));
    assertEquals("[\"t-a\",\"t-z\"]", ids(get("/v1/tasks")), "the full list stays by id");
  }

  @Test
  void aTaskQueuedWithNoRunnerIsPlacedWhenARunnerConnects() throws Exception {
    HttpResponse<String> r = submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-1\"}");
    assertEquals(201, r.statusCode(), r.body());
    assertEquals("queued", JSON.readTree(r.body()).get("state").asText());
    assertTrue(
        JSON.readTree(r.body()).get("waiting").asText().contains("no connected runner"), r.body());
    assertTrue(
        JSON.readTree(r.body()).get("waiting").asText().contains("restart it after adding"),
        "says that runners read their capsules once: " + r.body());

    WsFixture.RawPeer one = runner("r-one", "capsule:alpha", "slots:1");
    assertTrue(WsFixture.await(one.received, s -> s.contains("task.assign")).contains("\"t-1\""));
    assertEquals("assigned", JSON.readTree(get("/v1/tasks/t-1").body()).get("state").asText());
  }

  @Test
  void aTaskNamingARunnerThatIsAwayIsPlacedWhenItConnectsAgain() throws Exception {
    WsFixture.RawPeer first = runner("r-named", "capsule:alpha", "slots:1");
    assertTrue(
        hub.hub()
            .disconnect(new RunnerKey(PROJECT, "r-named"), Disconnect.CLOSE)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS));
    first.awaitClose();
    // The hub marks the runner away when its connection stream ends, just after the close the
    // client saw: wait (bounded) for that, or the task would be assigned to the away runner's
    // buffer instead of queued.
    long deadline = System.nanoTime() + WsFixture.WAIT.toNanos();
    while (hub.hub().runners(PROJECT).stream().anyMatch(RunnerInfo::connected)) {
      assertTrue(System.nanoTime() < deadline, "r-named still shows connected");
      Thread.onSpinWait();
    }
    WsFixture.RawPeer other = runner("r-other", "capsule:alpha", "slots:4");

    HttpResponse<String> r =
        submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-n\",\"runner\":\"r-named\"}");
    assertEquals(201, r.statusCode(), r.body());
    assertEquals("queued", JSON.readTree(r.body()).get("state").asText());

    WsFixture.RawPeer again = runner("r-named", "capsule:alpha", "slots:1");
    assertTrue(WsFixture.await(again.received, s -> s.contains("task.assign")).contains("t-n"));
    assertTrue(
        other.received.stream().noneMatch(s -> s.contains("task.assign")), "" + other.received);
  }

  @Test
  void beyondQueueMaxTheApiAnswers429WithRetryAfter() throws Exception {
    for (String id : new String[] {"t-1", "t-2"}) {
      HttpResponse<String> r =
          submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"" + id + "\"}");
      assertEquals(201, r.statusCode(), r.body());
    }
    assertEquals("[\"t-1\",\"t-2\"]", ids(get("/v1/tasks?state=queued")));
    HttpResponse<String> full = submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-3\"}");
    assertEquals(429, full.statusCode(), full.body());
    assertEquals(Optional.of("7"), full.headers().firstValue("Retry-After"));
    assertEquals("E-HUB-002", JSON.readTree(full.body()).get("code").asText(), full.body());
    assertTrue(full.body().contains("queue-max"), full.body());
    assertEquals(404, get("/v1/tasks/t-3").statusCode(), "a refused task is not kept");

    WsFixture.RawPeer one = runner("r-one", "capsule:alpha", "slots:2");
    WsFixture.await(one.received, s -> s.contains("task.assign") && s.contains("\"t-1\""));
    WsFixture.await(one.received, s -> s.contains("task.assign") && s.contains("\"t-2\""));
    HttpResponse<String> again = submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-3\"}");
    assertEquals(201, again.statusCode(), "the queue drained, so there is room: " + again.body());
  }

  @Test
  void aCancelEndsAQueuedTaskAtOnceAndItIsNeverPlaced() throws Exception {
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-c\"}").statusCode());
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-k\"}").statusCode());
    HttpResponse<String> cancel =
        http.send(
            request("/v1/tasks/t-c/cancel").POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, cancel.statusCode(), cancel.body());
    JsonNode task = JSON.readTree(get("/v1/tasks/t-c").body());
    assertEquals("canceled", task.get("state").asText());
    assertEquals("canceled", task.get("report").get("status").asText());
    HttpResponse<String> events = get("/v1/tasks/t-c/events");
    assertTrue(events.body().contains("event:report"), "the stream ends: " + events.body());

    WsFixture.RawPeer one = runner("r-one", "capsule:alpha", "slots:4");
    // t-k, queued after t-c, is placed; t-c is not (an assign for it would come first).
    String assign = WsFixture.await(one.received, s -> s.contains("task.assign"));
    assertTrue(assign.contains("\"t-k\""), assign);
    assertTrue(one.received.stream().noneMatch(s -> s.contains("task.assign")), "" + one.received);
    assertEquals("canceled", JSON.readTree(get("/v1/tasks/t-c").body()).get("state").asText());
  }

  @Test
  void queuedTasksSurviveAHubRestartOnH2AndArePlacedWhenARunnerConnects(@TempDir Path state)
      throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS); // this case starts its own
    ActorTestKit store1 = storeNode(state);
    hub = startOn(PersistentHubJournal.open(store1.system(), Duration.ofSeconds(20)));
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-c\"}").statusCode());
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-q\"}").statusCode());
    HttpResponse<String> cancel =
        http.send(
            request("/v1/tasks/t-c/cancel").POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, cancel.statusCode(), cancel.body());
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    // The CANCELED event is written without waiting: read the queue back until it is there, so
    // the restart below cannot race it.
    awaitStored(store1, "t-c");
    store1.shutdownTestKit(); // the store's node goes too, as when the hub's process dies

    ActorTestKit store2 = storeNode(state);
    hub = startOn(PersistentHubJournal.open(store2.system(), Duration.ofSeconds(20)));
    assertEquals("[\"t-q\"]", ids(get("/v1/tasks?state=queued")));
    assertEquals("canceled", JSON.readTree(get("/v1/tasks/t-c").body()).get("state").asText());

    WsFixture.RawPeer one = runner("r-one", "capsule:alpha", "slots:4");
    String assign = WsFixture.await(one.received, s -> s.contains("task.assign"));
    assertTrue(assign.contains("\"t-q\""), assign);
    assertEquals("assigned", JSON.readTree(get("/v1/tasks/t-q").body()).get("state").asText());
    assertTrue(one.received.stream().noneMatch(s -> s.contains("task.assign")), "" + one.received);
  }

  @Test
  void aDeletedTaskStaysDeletedAfterAHubRestart(@TempDir Path state) throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS); // this case starts its own
    ActorTestKit store1 = storeNode(state);
    hub = startOn(PersistentHubJournal.open(store1.system(), Duration.ofSeconds(20)));
    // t-r runs on a runner and reports (its record is the task journal); t-c is canceled while
    // queued (its record is the queue).
    WsFixture.RawPeer one = runner("r-one", "capsule:alpha", "slots:1");
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-r\"}").statusCode());
    WsFixture.await(one.received, s -> s.contains("task.assign") && s.contains("\"t-r\""));
    one.send(CODEC.encodeToString(report("t-r", 1)));
    assertTrue(get("/v1/tasks/t-r/events").body().contains("event:report"));
    // beta: no runner has it, so t-c waits in the queue until it is canceled there.
    assertEquals(201, submit("{\"capsule\":\"beta\",\"goal\":\"a\",\"id\":\"t-c\"}").statusCode());
    HttpResponse<String> cancel =
        http.send(
            request("/v1/tasks/t-c/cancel").POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, cancel.statusCode(), cancel.body());
    awaitStored(store1, "t-c");
    for (String id : new String[] {"t-r", "t-c"}) {
      HttpResponse<String> deleted = delete("/v1/tasks/" + id);
      assertEquals(204, deleted.statusCode(), deleted.body());
    }
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    store1.shutdownTestKit();

    ActorTestKit store2 = storeNode(state);
    hub = startOn(PersistentHubJournal.open(store2.system(), Duration.ofSeconds(20)));
    assertEquals("[]", ids(get("/v1/tasks")));
    for (String id : new String[] {"t-r", "t-c"}) {
      assertEquals(404, get("/v1/tasks/" + id).statusCode(), id);
      assertEquals(404, get("/v1/tasks/" + id + "/events").statusCode(), id);
      HttpResponse<String> again =
          submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"" + id + "\"}");
      assertEquals(409, again.statusCode(), again.body());
      assertEquals("E-API-003", JSON.readTree(again.body()).get("code").asText());
    }
  }

  private HttpResponse<String> delete(String path) throws Exception {
    String admin =
        WsFixture.TOKENS.issue(PROJECT, Optional.empty(), TokenScope.ADMIN, Duration.ofMinutes(5));
    return http.send(
        HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
            .header("Authorization", "Bearer " + admin)
            .DELETE()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Reads the stored queue until {@code taskId}'s CANCELED event is in it (bounded). */
  private static void awaitStored(ActorTestKit node, String taskId) {
    long deadline = System.nanoTime() + WsFixture.WAIT.toNanos();
    while (PersistentQueueStore.open(node.system(), PROJECT, Duration.ofSeconds(20))
        .recorded()
        .stream()
        .noneMatch(e -> e.kind() == QueueEvent.Kind.CANCELED && e.taskId().equals(taskId))) {
      assertTrue(System.nanoTime() < deadline, "the cancel of " + taskId + " was not stored");
    }
  }

  /** A node keeping the hub's store in an H2 file under {@code state}, as {@code --state-dir}. */
  private ActorTestKit storeNode(Path state) {
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

  private ReferenceHub startOn(HubJournal journal) throws Exception {
    return ReferenceHub.start(
            kit.system(),
            // The raw runners answer no ping: a long dead-after keeps them while the store warms
            // up.
            WsFixture.fast().deadAfter(Duration.ofSeconds(60)).build(),
            WsFixture.TOKENS,
            PROJECT,
            "127.0.0.1",
            0,
            journal)
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
  }

  /** A runner that said hello; the ack the hub answers proves the hub has taken its hello in. */
  private WsFixture.RawPeer runner(String id, String... capabilities) throws Exception {
    WsFixture.RawPeer p =
        new WsFixture.RawPeer(kit.system(), hub.runnerUrl(), WsFixture.token(PROJECT, id));
    String[] caps = new String[capabilities.length + 1];
    caps[0] = "ack";
    System.arraycopy(capabilities, 0, caps, 1, capabilities.length);
    p.send(WsFixture.hello(PROJECT, caps));
    WsFixture.await(p.received, s -> s.contains("\"type\":\"ack\""));
    return p;
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
        .header("Authorization", "Bearer " + token);
  }

  private HttpResponse<String> submit(String body) throws Exception {
    return http.send(
        request("/v1/tasks").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(request(path).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String ids(HttpResponse<String> list) throws Exception {
    StringBuilder out = new StringBuilder("[");
    for (JsonNode t : JSON.readTree(list.body())) {
      out.append(out.length() == 1 ? "" : ",").append('"').append(t.get("id").asText()).append('"');
    }
    return out.append(']').toString();
  }

  private static TaskReport report(String taskId, long seq) {
    return new TaskReport(
            TaskReportBody.builder(taskId, "done", new UsageSplit(1, 2, 3, 4, 5)).build())
        .withSeq(seq);
  }
}
