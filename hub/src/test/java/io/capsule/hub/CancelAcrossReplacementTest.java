package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.queue.QueueEvent;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RawRunners;
import io.capsule.hub.runner.RunnerInfo;
import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenScope;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A cancel through the API while a task is taken from a runner gone past {@code dead-after} and
 * placed again, over real sockets, with the order of events held by the test: the hub's event
 * stream is read into a queue here and handed to the book and the queue one event at a time (what
 * {@code ProjectHub} does as they come), so the cancel can be put exactly into the window between
 * the brain's take-back and the queue hearing of it.
 */
class CancelAcrossReplacementTest {
  private static final String PROJECT = "p-race";
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String WIRE_2 = "t-1~attempt-2";

  private final ActorTestKit kit = ActorTestKit.create("race", ConfigFactory.load());
  private final HttpClient http = HttpClient.newHttpClient();
  private final String token =
      RawRunners.TOKENS.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(5));
  private final BlockingQueue<HubEvent> held = new LinkedBlockingQueue<>();
  private final GatedJournal journal = new GatedJournal();
  private HubServer hub;
  private TaskBook book;
  private TaskQueue queue;
  private HandApi api;

  private final RefusingQueueStore store = new RefusingQueueStore();

  @BeforeEach
  void start() throws Exception {
    // dead-after 1 s: the raw runners answer pings, so only the one cut goes past it.
    hub =
        HubServer.create(
            kit.system(),
            RawRunners.fast().deadAfter(Duration.ofSeconds(1)).build(),
            RawRunners.TOKENS,
            journal);
    hub.bind("127.0.0.1", 0).toCompletableFuture().get(20, TimeUnit.SECONDS);
    hub.events().runWith(Sink.foreach(held::add), kit.system());
    api = HandApi.bind(kit.system(), hub, PROJECT, store);
    book = api.book();
    queue = api.queue();
  }

  @AfterEach
  void stop() throws Exception {
    api.unbind();
    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  @Test
  void aCancelBetweenTheTakeBackAndTheQueueHearingOfItEndsTheTaskAndPlacesItNowhere()
      throws Exception {
    RawRunners.Peer a = runner("r-a", "{}");
    HttpResponse<String> submitted = submit();
    assertEquals(201, submitted.statusCode(), submitted.body());
    JsonNode first = JSON.readTree(submitted.body());
    assertEquals(PROJECT + "/r-a", first.get("runner").asText(), submitted.body());
    assertEquals(1, first.get("attempt").asInt(), submitted.body());
    assertEquals("t-1", first.get("attempt_id").asText(), submitted.body());
    a.await(s -> s.contains("task.assign"));
    RawRunners.Peer b = runner("r-b", "{}");
    a.cut(); // and not back within dead-after

    // The brain has taken t-1 back (its notice is the next event); the queue has not heard yet.
    HubEvent reclaimed = next(e -> e instanceof HubEvent.Reclaimed);
    CompletableFuture<HttpResponse<String>> cancel = cancelAsync();
    Await.until(
        () -> book.get("t-1").orElseThrow().cancelRequested(),
        asked -> asked,
        WAIT,
        "the cancel reached the queue");
    apply(reclaimed);

    HttpResponse<String> answer = cancel.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertEquals(200, answer.statusCode(), answer.body());
    assertEquals("canceled", JSON.readTree(answer.body()).get("state").asText(), answer.body());
    JsonNode task = task();
    assertEquals("canceled", task.get("state").asText(), task.toString());
    assertEquals("canceled", task.get("report").get("status").asText(), task.toString());
    assertEquals(0, queue.size(), "nothing waits to be placed again");
    assertTrue(openTasks("r-b").isEmpty(), "r-b got no attempt of t-1");
    assertFalse(
        b.unread().stream().anyMatch(s -> s.contains("task.assign")), b.unread().toString());
  }

  /**
   * In the same window, the store refuses the cancel's mark: 503, but the task is marked and the
   * take-back ends it canceled in this hub. The cancel sent again (the 503's advice) stores the
   * mark a restart needs and is answered as the cancel, not as "already finished".
   */
  @Test
  void aCancelWhoseMarkTheStoreRefusedInThatWindowIsKeptWhenSentAgain() throws Exception {
    RawRunners.Peer a = runner("r-a", "{}");
    assertEquals(201, submit().statusCode());
    a.await(s -> s.contains("task.assign"));
    a.cut();
    HubEvent reclaimed = next(e -> e instanceof HubEvent.Reclaimed);
    store.refuse(true);
    HttpResponse<String> refused = cancel();
    assertEquals(503, refused.statusCode(), refused.body());
    assertEquals("E-HUB-004", JSON.readTree(refused.body()).get("code").asText());
    apply(reclaimed);
    assertEquals("canceled", task().get("state").asText(), "canceled in this hub all the same");

    store.refuse(false);
    HttpResponse<String> again = cancel();
    assertEquals(200, again.statusCode(), again.body());
    assertEquals("canceled", JSON.readTree(again.body()).get("state").asText(), again.body());
    assertTrue(
        store.kept(QueueEvent.Kind.CANCEL_REQUESTED, "t-1"),
        "a restart would end it canceled again: " + store);
    assertEquals(409, cancel().statusCode(), "once kept, it is simply finished");
  }

  @Test
  void aCancelAfterTheTaskIsPlacedAgainReachesTheNewAttemptAndTheOldRunnersLateReportIsRefused()
      throws Exception {
    RawRunners.Peer a = runner("r-a", "{}");
    assertEquals(201, submit().statusCode());
    a.await(s -> s.contains("task.assign"));
    a.send(progress("t-1", 1));
    apply(next(e -> e instanceof HubEvent.Progress));
    RawRunners.Peer b = runner("r-b", "{}");
    a.cut();
    apply(next(e -> e instanceof HubEvent.Reclaimed)); // placed again, on r-b

    String assign = b.await(s -> s.contains("task.assign"));
    assertTrue(assign.contains("\"" + WIRE_2 + "\""), assign);
    HttpResponse<String> answer = cancel();
    assertEquals(202, answer.statusCode(), answer.body());
    String cancel = b.await(s -> s.contains("task.cancel"));
    assertTrue(cancel.contains("\"" + WIRE_2 + "\""), cancel);

    JsonNode shown = task();
    assertEquals(2, shown.get("attempt").asInt(), shown.toString());
    assertEquals(WIRE_2, shown.get("attempt_id").asText(), shown.toString());
    assertEquals(PROJECT + "/r-b", shown.get("runner").asText(), shown.toString());
    JsonNode listed = JSON.readTree(get("/v1/tasks").body()).get(0);
    assertEquals(2, listed.get("attempt").asInt(), listed.toString());
    assertEquals(WIRE_2, listed.get("attempt_id").asText(), listed.toString());

    // r-a, back, hears the take-back's cancel of the first attempt; its late canceled report of
    // that attempt is refused and confuses nothing: the second attempt still runs on r-b.
    RawRunners.Peer back = runner("r-a", "{\"t-1\":1}");
    String taken = back.await(s -> s.contains("task.cancel"));
    assertTrue(taken.contains("\"t-1\"") && taken.contains("E-HUB-008"), taken);
    back.send(canceledReport("t-1", 2));
    String refused = back.await(s -> s.contains("\"type\":\"error\""));
    assertTrue(refused.contains("E-PRO-011"), refused);
    assertEquals(java.util.Set.of("t-1"), openTasks("r-b"));
    assertTrue(task().get("report").isNull(), task().toString());

    b.send(canceledReport(WIRE_2, 1));
    apply(next(e -> e instanceof HubEvent.Report));
    JsonNode done = task();
    assertEquals("failed", done.get("state").asText(), done.toString());
    assertEquals("t-1", done.get("report").get("task_id").asText(), done.toString());
    assertEquals(2, done.get("events").asInt(), "the first attempt's progress and the report");
  }

  @Test
  void aCancelWhileTheAssignmentIsBeingStoredWaitsForItAndReachesTheRunnerAfterIt()
      throws Exception {
    RawRunners.Peer b = runner("r-b", "{}");
    journal.hold(); // the brain's writes wait from now on: t-1's assignment stays in flight
    CompletableFuture<HttpResponse<String>> submitted =
        http.sendAsync(
            request("/v1/tasks")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    Await.until(journal::waiting, n -> n > 0, WAIT, "the assignment reached the journal");

    CompletableFuture<HttpResponse<String>> cancel = cancelAsync();
    Await.until(
        () -> book.get("t-1").orElseThrow().cancelRequested(),
        asked -> asked,
        WAIT,
        "the cancel reached the queue");
    assertFalse(cancel.isDone(), "it waits for the assignment: the brain has not stored it yet");
    journal.release();

    assertEquals(201, submitted.get(WAIT.toSeconds(), TimeUnit.SECONDS).statusCode());
    HttpResponse<String> answer = cancel.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertEquals(202, answer.statusCode(), answer.body());
    // In this order (a cancel first would be skipped by the first wait and fail the second).
    assertTrue(b.await(s -> s.contains("task.assign")).contains("\"t-1\""));
    String cancelFrame = b.await(s -> s.contains("task.cancel"));
    assertTrue(cancelFrame.contains("\"t-1\""), cancelFrame);
    assertEquals(java.util.Set.of("t-1"), openTasks("r-b"), "the runner has it, to cancel");
  }

  /**
   * A journal that keeps nothing and, while held, keeps each write waiting until released: an
   * assignment then stays in flight between the queue and the runner for as long as a test needs.
   */
  private static final class GatedJournal implements io.capsule.hub.store.HubJournal {
    private final java.util.List<CompletableFuture<Void>> waiting = new java.util.ArrayList<>();
    private boolean holding;

    synchronized void hold() {
      holding = true;
    }

    void release() {
      java.util.List<CompletableFuture<Void>> release;
      synchronized (this) {
        holding = false;
        release = java.util.List.copyOf(waiting);
        waiting.clear();
      }
      release.forEach(w -> w.complete(null));
    }

    synchronized int waiting() {
      return waiting.size();
    }

    @Override
    public java.util.List<Entry> recorded() {
      return java.util.List.of();
    }

    @Override
    public void append(Entry entry) {}

    @Override
    public void close() {}

    @Override
    public synchronized java.util.concurrent.CompletionStage<Void> appendAllAsync(
        java.util.List<Entry> entries) {
      CompletableFuture<Void> written = new CompletableFuture<>();
      if (holding) {
        waiting.add(written);
      } else {
        written.complete(null);
      }
      return written;
    }
  }

  /** Hands held events to the book and the queue, in order, until one matches: that one not. */
  private HubEvent next(Predicate<HubEvent> match) throws InterruptedException {
    while (true) {
      HubEvent e = held.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
      if (e == null) {
        throw new AssertionError("no matching hub event within " + WAIT);
      }
      if (match.test(e)) {
        return e;
      }
      apply(e);
    }
  }

  /** What the project's hub does with each event (ProjectHub.record, without its meters). */
  private void apply(HubEvent e) {
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

  private java.util.Set<String> openTasks(String runnerId) {
    return hub.runners(PROJECT).stream()
        .filter(r -> r.key().runnerId().equals(runnerId))
        .map(RunnerInfo::openTasks)
        .findFirst()
        .orElse(java.util.Set.of());
  }

  private RawRunners.Peer runner(String id, String resume) throws Exception {
    RawRunners.Peer p = RawRunners.hello(kit.system(), hub.url(), PROJECT, id, resume);
    apply(next(e -> e instanceof HubEvent.RunnerUp u && u.runner().runnerId().equals(id)));
    return p;
  }

  private String base() {
    return api.url();
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(base() + path))
        .header("Authorization", "Bearer " + token)
        .timeout(WAIT);
  }

  private HttpResponse<String> submit() throws Exception {
    return http.send(
        request("/v1/tasks")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private CompletableFuture<HttpResponse<String>> cancelAsync() {
    return http.sendAsync(
        request("/v1/tasks/t-1/cancel").POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> cancel() throws Exception {
    return cancelAsync().get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode task() throws Exception {
    return JSON.readTree(get("/v1/tasks/t-1").body());
  }

  private static String progress(String id, long seq) {
    return CODEC.encodeToString(
        new TaskProgress(id, "text", JsonNodeFactory.instance.objectNode().put("n", seq))
            .withSeq(seq));
  }

  private static String canceledReport(String id, long seq) {
    return CODEC.encodeToString(
        new TaskReport(
                TaskReportBody.builder(id, "failed", new UsageSplit(1, 2, 3, 4, 5))
                    .failureType("canceled")
                    .build())
            .withSeq(seq));
  }
}
