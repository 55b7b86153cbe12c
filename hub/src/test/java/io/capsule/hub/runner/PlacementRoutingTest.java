package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubJournal;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where {@code POST /v1/tasks} sends a task, over real sockets: two raw runners announcing
 * different capsules and slots ({@code capsule:<name>}, {@code slots:<n>}); each gets only the
 * tasks of its own capsules, a full runner takes no more (the task waits, queued), and a named
 * runner that is not known is a 404 naming it.
 */
class PlacementRoutingTest {
  private static final String PROJECT = "p-place";
  private final ActorTestKit kit = ActorTestKit.create();
  private ReferenceHub hub;
  private HubCalls api;
  private WsFixture.RawPeer alpha;
  private WsFixture.RawPeer beta;

  @BeforeEach
  void start() throws Exception {
    // The raw runners answer no ping: a long dead-after keeps them connected while a loaded
    // machine serves the first requests slowly (2 s dropped them here).
    hub = WsFixture.hub(kit.system(), PROJECT, Duration.ofSeconds(60), HubJournal.none());
    api = new HubCalls(PROJECT, hub::apiUrl);
    alpha = runner("r-alpha", "capsule:alpha", "slots:1");
    beta = runner("r-beta", "capsule:beta", "capsule:gamma", "slots:2");
  }

  @AfterEach
  void stop() throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  private WsFixture.RawPeer runner(String id, String... capabilities) throws Exception {
    return WsFixture.runner(kit.system(), hub.runnerUrl(), PROJECT, id, capabilities);
  }

  private HttpResponse<String> submit(String body) throws Exception {
    return api.submit(body);
  }

  @Test
  void twoRunnersWithDifferentCapsulesGetOnlyTheirOwnTasks() throws Exception {
    assertEquals(201, submit("{\"capsule\":\"beta\",\"goal\":\"b\",\"id\":\"t-b\"}").statusCode());
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-a\"}").statusCode());
    assertEquals(201, submit("{\"capsule\":\"gamma\",\"goal\":\"g\",\"id\":\"t-g\"}").statusCode());
    assertTrue(WsFixture.await(alpha.received, s -> s.contains("task.assign")).contains("t-a"));
    String first = WsFixture.await(beta.received, s -> s.contains("task.assign"));
    String second = WsFixture.await(beta.received, s -> s.contains("task.assign"));
    assertTrue(first.contains("\"t-b\"") && second.contains("\"t-g\""), first + second);
    assertTrue(
        alpha.received.stream().noneMatch(s -> s.contains("task.assign")),
        "alpha got nothing else: " + alpha.received);
  }

  @Test
  void theRunnersListShowsWhatPlacementSeesOfEachRunner() throws Exception {
    assertEquals(201, submit("{\"capsule\":\"gamma\",\"goal\":\"g\",\"id\":\"t-g\"}").statusCode());
    HttpResponse<String> r = api.get("/v1/runners");
    assertEquals(200, r.statusCode());
    JsonNode runners = HubCalls.json(r);
    assertEquals(2, runners.size(), r.body());
    JsonNode a = runners.get(0);
    JsonNode b = runners.get(1);
    assertEquals("r-alpha", a.get("id").asText());
    assertEquals("[\"alpha\"]", a.get("capsules").toString());
    assertEquals(1, a.get("slots").asInt());
    assertEquals(0, a.get("running").asInt());
    assertEquals("r-beta", b.get("id").asText());
    assertEquals("[\"beta\",\"gamma\"]", b.get("capsules").toString());
    assertEquals(2, b.get("slots").asInt());
    assertEquals(1, b.get("running").asInt());
    assertEquals("[\"t-g\"]", b.get("open_tasks").toString());
  }

  @Test
  void aRunnerWithNoFreeSlotTakesNoMoreAndNoOtherRunnerHasTheCapsule() throws Exception {
    assertEquals(201, submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-1\"}").statusCode());
    // Neither can run now: both wait in the project's queue (TaskQueueTest drains it).
    HttpResponse<String> second = submit("{\"capsule\":\"alpha\",\"goal\":\"a\",\"id\":\"t-2\"}");
    assertEquals(201, second.statusCode(), second.body());
    assertTrue(second.body().contains("\"state\":\"queued\""), second.body());
    HttpResponse<String> none = submit("{\"capsule\":\"delta\",\"goal\":\"d\",\"id\":\"t-3\"}");
    assertEquals(201, none.statusCode(), none.body());
    assertTrue(none.body().contains("\"state\":\"queued\""), none.body());
    WsFixture.await(alpha.received, s -> s.contains("task.assign") && s.contains("t-1"));
    assertTrue(
        alpha.received.stream().noneMatch(s -> s.contains("task.assign")), "" + alpha.received);
    assertTrue(
        beta.received.stream().noneMatch(s -> s.contains("task.assign")), "" + beta.received);
  }

  @Test
  void aNamedRunnerGetsTheTaskAndAnUnknownOneIsA404NamingIt() throws Exception {
    HttpResponse<String> ghost =
        submit("{\"capsule\":\"beta\",\"goal\":\"b\",\"id\":\"t-x\",\"runner\":\"r-ghost\"}");
    assertEquals(404, ghost.statusCode(), ghost.body());
    assertTrue(ghost.body().contains("r-ghost"), ghost.body());
    assertEquals(
        201,
        submit("{\"capsule\":\"beta\",\"goal\":\"b\",\"id\":\"t-y\",\"runner\":\"r-beta\"}")
            .statusCode());
    assertTrue(WsFixture.await(beta.received, s -> s.contains("task.assign")).contains("t-y"));
  }
}
