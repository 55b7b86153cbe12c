package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.queue.PersistentQueueStore;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RawRunners;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.token.TokenScope;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cancel of a task the hub took back from a runner gone past {@code dead-after} survives a hub
 * restart on the same store (an H2 file, as {@code --state-dir}): the restarted hub replays the
 * take-back from the brain's journal and must end the task canceled, not place it again. Two ways
 * in: the cancel arrives between the brain's take-back and the queue hearing of it (the first hub
 * is built here by hand so the test holds its events and stops it inside that window), and the
 * cancel arrives while the task waits in the queue to be placed again. After each restart a new
 * runner connects and a new task is submitted: the runner's first assignment must be that task.
 */
class CancelRestartTest {
  private static final String PROJECT = "p-cancel-restart";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String T1 = "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}";
  private static final String T2 = "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-2\"}";

  private final ActorTestKit kit = ActorTestKit.create("restarted", ConfigFactory.load());
  private final List<ActorTestKit> kits = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private final String token =
      RawRunners.TOKENS.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(5));
  private ReferenceHub hub;
  private String apiUrl;

  @TempDir Path state;

  @AfterEach
  void stop() throws Exception {
    if (hub != null) {
      hub.stop().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
    kits.forEach(ActorTestKit::shutdownTestKit);
  }

  @Test
  void aCancelBetweenTheTakeBackAndTheQueueHearingOfItStillEndsTheTaskAfterARestart()
      throws Exception {
    ActorTestKit node = storeNode();
    ActorTestKit first = ActorTestKit.create("first", ConfigFactory.load());
    kits.add(first);
    PersistentHubJournal journal = PersistentHubJournal.open(node.system(), WAIT);
    PersistentQueueStore queueStore = PersistentQueueStore.open(node.system(), PROJECT, WAIT);
    HubServer brain =
        HubServer.create(
            first.system(),
            RawRunners.fast().deadAfter(Duration.ofSeconds(1)).build(),
            RawRunners.TOKENS,
            journal);
    brain.bind("127.0.0.1", 0).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    BlockingQueue<HubEvent> held = new LinkedBlockingQueue<>();
    brain.events().runWith(Sink.foreach(held::add), first.system());
    HandApi api = HandApi.bind(first.system(), brain, PROJECT, queueStore);
    TaskBook book = api.book();
    TaskQueue queue = api.queue();
    apiUrl = api.url();

    RawRunners.Peer a = RawRunners.hello(first.system(), brain.url(), PROJECT, "r-a", "{}");
    next(held, e -> e instanceof HubEvent.RunnerUp, book, queue);
    assertEquals(201, submit(T1).statusCode());
    a.await(s -> s.contains("task.assign"));
    a.cut(); // and not back within dead-after
    // The brain has taken t-1 back and journaled it; its notice to the queue is held here, and
    // the hub stops before it is heard: nothing in memory ends the task.
    next(held, e -> e instanceof HubEvent.Reclaimed, book, queue);
    HttpResponse<String> canceled = cancel();
    assertEquals(202, canceled.statusCode(), canceled.body());
    assertTrue(JSON.readTree(canceled.body()).get("cancel_requested").asBoolean(), canceled.body());

    api.unbind();
    brain.close().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    first.shutdownTestKit();
    node.shutdownTestKit();

    startHub();
    assertEndedCanceledAndPlacedNowhere();
  }

  @Test
  void aCancelWhileATakenBackTaskWaitsToBePlacedAgainStillEndsItAfterARestart() throws Exception {
    ActorTestKit node = startHub(Duration.ofSeconds(1));
    RawRunners.Peer a = RawRunners.hello(kit.system(), hub.runnerUrl(), PROJECT, "r-a", "{}");
    assertEquals(201, submit(T1).statusCode());
    a.await(s -> s.contains("task.assign"));
    a.cut(); // and not back within dead-after: t-1 waits to be placed again, no runner has room
    awaitTask("t-1", t -> "queued".equals(t.get("state").asText()));
    HttpResponse<String> canceled = cancel();
    assertEquals(200, canceled.statusCode(), canceled.body());
    assertEquals("canceled", JSON.readTree(canceled.body()).get("state").asText());

    hub.stop().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    hub = null;
    node.shutdownTestKit();

    startHub();
    assertEndedCanceledAndPlacedNowhere();
  }

  /**
   * After a restart: t-1 ends canceled (its report says so) and a runner that connects is given
   * t-2, submitted after it, and not t-1 (a task taken back goes to the front of the queue).
   */
  private void assertEndedCanceledAndPlacedNowhere() throws Exception {
    JsonNode t1 = awaitTask("t-1", t -> !"queued".equals(t.get("state").asText()));
    assertEquals("canceled", t1.get("state").asText(), t1.toString());
    assertEquals("canceled", t1.get("report").get("status").asText(), t1.toString());
    assertTrue(t1.get("cancel_requested").asBoolean(), t1.toString());
    RawRunners.Peer b = RawRunners.hello(kit.system(), hub.runnerUrl(), PROJECT, "r-b", "{}");
    assertEquals(201, submit(T2).statusCode());
    String assign = b.await(s -> s.contains("task.assign"));
    assertTrue(assign.contains("\"t-2\""), "r-b's first assignment is t-2: " + assign);
  }

  private ActorTestKit storeNode() {
    ActorTestKit node = RawRunners.storeNode(HubStore.h2File(state));
    kits.add(node);
    return node;
  }

  /** A reference hub on the H2 file, with a dead-after no runner of these tests outlives. */
  private ActorTestKit startHub() throws Exception {
    return startHub(Duration.ofSeconds(60));
  }

  private ActorTestKit startHub(Duration deadAfter) throws Exception {
    ActorTestKit node = storeNode();
    hub =
        ReferenceHub.start(
                kit.system(),
                RawRunners.fast().deadAfter(deadAfter).build(),
                RawRunners.TOKENS,
                PROJECT,
                "127.0.0.1",
                0,
                PersistentHubJournal.open(node.system(), WAIT))
            .toCompletableFuture()
            .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    apiUrl = hub.apiUrl();
    return node;
  }

  /** Hands held events to the book and the queue, in order, until one matches: that one not. */
  private static HubEvent next(
      BlockingQueue<HubEvent> held, Predicate<HubEvent> match, TaskBook book, TaskQueue queue)
      throws InterruptedException {
    while (true) {
      HubEvent e = held.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
      if (e == null) {
        throw new AssertionError("no matching hub event within " + WAIT);
      }
      if (match.test(e)) {
        return e;
      }
      if (e instanceof HubEvent.Progress p) {
        book.progress(p.progress());
      } else if (e instanceof HubEvent.Report r) {
        book.report(r.report());
        queue.drain();
      } else if (e instanceof HubEvent.RunnerUp) {
        queue.drain();
      } else if (e instanceof HubEvent.Reclaimed r) {
        queue.reclaim(r.runner(), r.taskIds());
      }
    }
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(apiUrl + path))
        .header("Authorization", "Bearer " + token)
        .timeout(WAIT);
  }

  private HttpResponse<String> submit(String body) throws Exception {
    return http.send(
        request("/v1/tasks").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> cancel() throws Exception {
    return http.send(
        request("/v1/tasks/t-1/cancel").POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode awaitTask(String id, Predicate<JsonNode> match) throws Exception {
    return Await.until(
        () -> {
          HttpResponse<String> r =
              http.send(
                  request("/v1/tasks/" + id).GET().build(), HttpResponse.BodyHandlers.ofString());
          return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
        },
        t -> t != null && match.test(t),
        WAIT,
        "task " + id);
  }
}
