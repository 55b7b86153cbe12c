package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.Disconnect;
import io.capsule.runtime.hub.HubLink;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reference hub and a runner on real loopback sockets, each in its own actor system, with real
 * harness processes: submit, live progress over SSE, report; cancel mid-run; repeated connection
 * cuts; a wrong token.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HubRunnerEndToEndTest {
  private static final String PROJECT = "demo";
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);

  @TempDir static Path capsules;

  private ActorSystem<Void> hubSystem;
  private ActorSystem<Void> runnerSystem;
  private ReferenceHub hub;
  private RunnerNode runner;
  private String token; // the runner's
  private String apiToken; // the task API's
  private HubApiClient api;
  private final BlockingQueue<HubLink.TaskNotice> notices = new LinkedBlockingQueue<>();

  @BeforeAll
  void start() throws Exception {
    TestCapsules.copyHello(capsules);
    TestCapsules.capsule(capsules, "slow", TestCapsules.slowHarness());
    TestCapsules.capsule(capsules, "stream", TestCapsules.streamHarness(400));
    TestCapsules.capsule(capsules, "huge", hugeLineHarness(3_000_000));
    CapsuleSettings settings = CapsuleSettings.load();
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    token = tokens.issue(PROJECT, Optional.empty(), Duration.ofMinutes(30));
    apiToken = tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(30));
    hubSystem = ActorSystem.create(Behaviors.empty(), "hub");
    runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
    hub =
        ReferenceHub.start(
                hubSystem, RuntimeWiring.protocol(settings), tokens, PROJECT, "127.0.0.1", 0)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    api = new HubApiClient(hub.apiUrl(), apiToken);
    runner =
        TestCapsules.connectedRunner(
            runnerSystem, settings, hub.runnerUrl(), PROJECT, token, capsules, notices::add);
  }

  @AfterAll
  void stop() {
    runner.close();
    hub.stop().toCompletableFuture().join();
    runnerSystem.terminate();
    hubSystem.terminate();
  }

  @Test
  void aSubmittedTaskStreamsItsProgressAndEndsWithOneReport() throws Exception {
    JsonNode created =
        api.submit("{\"capsule\":\"hello\",\"goal\":\"Say hello\",\"id\":\"t-hello\"}");
    assertEquals("t-hello", created.get("id").asText());
    List<HubApiClient.Sse> events = api.follow("t-hello", 0);
    HubApiClient.assertContiguous(events);
    HubApiClient.Sse report = events.get(events.size() - 1);
    assertEquals("report", report.event());
    assertEquals("done", report.data().get("status").asText());
    assertEquals("Hello! You asked: Say hello", report.data().get("summary_business").asText());
    assertTrue(events.stream().anyMatch(e -> e.event().equals("text")));
    assertEquals("done", api.get("/v1/tasks/t-hello").get("state").asText());
    assertEquals("task t-hello: started (capsule hello)", notice("t-hello").describe());
    String finished = notice("t-hello").describe();
    assertTrue(finished.startsWith("task t-hello: finished (done, 1 turn, "), finished);

    // Resuming from an event id gives exactly the rest, once.
    List<HubApiClient.Sse> tail = api.follow("t-hello", events.size() - 3);
    assertEquals(events.subList(events.size() - 3, events.size()), tail);

    // The list filters by state and by capsule, exactly.
    assertTrue(ids(api.get("/v1/tasks?capsule=hello&state=done")).contains("t-hello"));
    assertTrue(!ids(api.get("/v1/tasks?capsule=slow")).contains("t-hello"));
    assertTrue(!ids(api.get("/v1/tasks?state=running")).contains("t-hello"));
    for (JsonNode t : api.get("/v1/tasks?capsule=hello")) {
      assertEquals("hello", t.get("capsule").asText(), t.toString());
    }
  }

  private static List<String> ids(JsonNode tasks) {
    List<String> out = new java.util.ArrayList<>();
    tasks.forEach(t -> out.add(t.get("id").asText()));
    return out;
  }

  @Test
  void aTaskCanceledMidRunReportsCanceledAndItsHarnessIsGone() throws Exception {
    api.submit("{\"capsule\":\"slow\",\"goal\":\"take your time\",\"id\":\"t-slow\"}");
    List<HubApiClient.Sse> events = api.follow("t-slow", 0, api.cancelAt("t-slow", 4));
    JsonNode report = events.get(events.size() - 1).data();
    assertEquals("failed", report.get("status").asText());
    assertEquals("canceled", report.get("failure_type").asText());
    assertTrue(
        TestCapsules.harnessesAlive("slow-harness-marker").isEmpty(),
        "the harness outlived its run");
    JsonNode again = api.post("/v1/tasks/t-slow/cancel");
    assertEquals(
        false, again.get("canceled").asBoolean(), "a cancel after the report changes nothing");
  }

  @Test
  void repeatedConnectionCutsLoseAndRepeatNothing() throws Exception {
    api.submit("{\"capsule\":\"stream\",\"goal\":\"count\",\"id\":\"t-stream\"}");
    RunnerKey key = new RunnerKey(PROJECT, RunnerKey.DEFAULT_RUNNER);
    Disconnect[] cuts = {Disconnect.CLOSE, Disconnect.DROP, Disconnect.ABORT, Disconnect.DROP};
    long[] at = {40, 120, 200, 300};
    List<HubApiClient.Sse> events =
        api.follow(
            "t-stream",
            0,
            new LongPredicate() {
              int next;

              @Override
              public boolean test(long id) {
                if (next < at.length && id >= at[next]) {
                  hub.hub().disconnect(key, cuts[next++]);
                }
                return false;
              }
            });
    HubApiClient.assertContiguous(events);
    JsonNode report = events.get(events.size() - 1).data();
    assertEquals("done", report.get("status").asText());
    StringBuilder streamed = new StringBuilder();
    events.stream()
        .filter(e -> e.event().equals("text") && e.data().has("delta"))
        .forEach(e -> streamed.append(e.data().get("delta").asText()));
    assertEquals(report.get("summary_business").asText(), streamed.toString());
    assertEquals(400, streamed.toString().split(" ").length);
  }

  @Test
  void aTaskTooBigForOneFrameIsRefusedAndTheRunnerStaysUsable() throws Exception {
    String goal = "x".repeat(2 * 1024 * 1024); // above the 1 MiB frame cap
    HttpResponse<String> r =
        api.submitRaw("{\"capsule\":\"hello\",\"id\":\"t-huge\",\"goal\":\"" + goal + "\"}");
    assertEquals(413, r.statusCode(), r.body().substring(0, Math.min(300, r.body().length())));
    assertTrue(r.body().contains("E-PRO-005"), r.body());
    assertEquals(404, api.getAs("/v1/tasks/t-huge", apiToken).statusCode(), "nothing was kept");
    api.submit("{\"capsule\":\"hello\",\"goal\":\"Say hello\",\"id\":\"t-after-huge\"}");
    List<HubApiClient.Sse> events = api.follow("t-after-huge", 0);
    assertEquals("done", events.get(events.size() - 1).data().get("status").asText());
  }

  @Test
  void aHarnessLineBiggerThanTheFrameCapReachesTheHubWholeAndTheLinkStaysUp() throws Exception {
    api.submit("{\"capsule\":\"huge\",\"goal\":\"write a lot\",\"id\":\"t-huge-line\"}");
    List<HubApiClient.Sse> events = api.follow("t-huge-line", 0);
    HubApiClient.assertContiguous(events);
    StringBuilder streamed = new StringBuilder();
    events.stream()
        .filter(e -> e.event().equals("text") && e.data().has("delta"))
        .forEach(
            e -> {
              assertTrue(!e.data().has("so_far"), "deltas travel without the text so far");
              streamed.append(e.data().get("delta").asText());
            });
    assertEquals("a".repeat(3_000_000), streamed.toString(), "split, nothing lost");
    JsonNode report = events.get(events.size() - 1).data();
    assertEquals("done", report.get("status").asText());
    String summary = report.get("summary_business").asText();
    assertTrue(summary.startsWith("aaaa") && summary.endsWith("bytes cut to fit the frame cap]"));

    // The connection was never wedged by a frame the hub must refuse: the next task runs.
    api.submit("{\"capsule\":\"hello\",\"goal\":\"Say hello\",\"id\":\"t-after-line\"}");
    List<HubApiClient.Sse> after = api.follow("t-after-line", 0);
    assertEquals("done", after.get(after.size() - 1).data().get("status").asText());
  }

  /** The runner's next notice about {@code task} (others are skipped). */
  private HubLink.TaskNotice notice(String task) throws InterruptedException {
    while (true) {
      HubLink.TaskNotice n = notices.poll(30, TimeUnit.SECONDS);
      assertTrue(n != null, "no notice about " + task);
      if (n.taskId().equals(task)) {
        return n;
      }
    }
  }

  /** One delta line of {@code n} letters (above the 1 MiB frame cap), then the same as result. */
  private static String hugeLineHarness(int n) {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "big=$(head -c "
        + n
        + " /dev/zero | tr '\\0' a)\n"
        + "printf '{\"type\":\"delta\",\"text\":\"%s\"}\\n' \"$big\"\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$big\"\n";
  }

  @Test
  void theTaskApiAdmitsApiAndAdminTokensAndRefusesARunnerToken() throws Exception {
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    for (String route : new String[] {"/v1/tasks", "/v1/runners", "/v1/tasks/nope"}) {
      HttpResponse<String> runnerToken = api.getAs(route, token);
      assertEquals(403, runnerToken.statusCode(), route);
      assertTrue(runnerToken.body().contains("E-PRO-012"), runnerToken.body());
    }
    String admin = tokens.issue(PROJECT, Optional.empty(), TokenScope.ADMIN, Duration.ofMinutes(5));
    assertEquals(200, api.getAs("/v1/tasks", apiToken).statusCode());
    assertEquals(200, api.getAs("/v1/tasks", admin).statusCode());
  }

  @Test
  void theApiAndTheRunnerEndpointRefuseAWrongToken() throws Exception {
    ProjectTokens other =
        new ProjectTokens(
            "another secret, also thirty-two bytes long".getBytes(StandardCharsets.UTF_8),
            Duration.ofSeconds(30));
    String wrong = other.issue(PROJECT, Optional.of("intruder"), Duration.ofMinutes(5));
    HttpResponse<String> refusedApi = api.getAs("/v1/runners", wrong);
    assertEquals(401, refusedApi.statusCode());
    assertTrue(refusedApi.body().contains("E-PRO-007"), refusedApi.body());

    CompletableFuture<ConnectionState> refused = new CompletableFuture<>();
    RunnerNode intruder =
        RunnerNode.start(
            runnerSystem,
            CapsuleSettings.load(),
            hub.runnerUrl(),
            PROJECT,
            TokenSource.fixed(wrong),
            capsules,
            1,
            s -> {
              if (s.status() == ConnectionState.Status.DISCONNECTED) {
                refused.complete(s);
              }
            },
            n -> {});
    try {
      ConnectionState s = refused.get(60, TimeUnit.SECONDS);
      assertTrue(s.reason().orElse("").contains("401"), s.toString());
    } finally {
      intruder.close();
    }
    for (JsonNode r : api.get("/v1/runners")) {
      assertTrue(!r.get("id").asText().equals("intruder"));
    }
  }
}
