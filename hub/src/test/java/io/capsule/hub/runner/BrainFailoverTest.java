package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.Await;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenScope;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.RunnerClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Down;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The project's brain is one sharded actor somewhere in a cluster, and every node answers for it:
 * three hub nodes (three actor systems on 127.0.0.1, Artery TCP, one shared H2 store in this JVM).
 * A task submitted on node A (where the brain starts) is listed, streamed (SSE) and canceled
 * through node B; a real runner client connected to node C runs it. Then node A is downed (as the
 * split-brain resolver would after a kill; its actor system shuts down, brain and all): the brain
 * starts on a survivor from the journal, the gateway on C closes the runner's socket when the old
 * brain's actor is gone, the runner resumes against the new brain, and the task finishes with every
 * event once, in order, and one report — on the SSE stream opened on B before the move, and in the
 * task's view on both survivors.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BrainFailoverTest {
  private static final String PROJECT = "p-cluster";
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final ProtocolConfig CONFIG =
      WsFixture.fast().deadAfter(Duration.ofSeconds(30)).build();
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private final String apiToken =
      WsFixture.TOKENS.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(10));
  private final List<ActorTestKit> nodes = new ArrayList<>();
  private final List<ReferenceHub> hubs = new ArrayList<>();
  private final List<Stream<String>> streams = new ArrayList<>();
  private RunnerClient runner;

  @AfterEach
  void stop() {
    streams.forEach(Stream::close);
    if (runner != null) {
      runner.close();
    }
    for (ReferenceHub h : hubs) {
      try {
        h.stop().toCompletableFuture().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        // a downed node's hub went with its system
      }
    }
    nodes.forEach(ActorTestKit::shutdownTestKit);
  }

  private ActorTestKit node(HubStore store, List<Address> seeds) {
    Config cluster =
        ConfigFactory.parseString(
                """
                pekko.cluster.split-brain-resolver.active-strategy = keep-majority
                pekko.cluster.down-removal-margin = 500ms
                pekko.cluster.sharding.retry-interval = 200ms
                pekko.cluster.sharding.coordinator-failure-backoff = 500ms
                jdbc-read-journal.refresh-interval = 200ms
                """)
            .withValue(
                "pekko.cluster.seed-nodes",
                com.typesafe.config.ConfigValueFactory.fromIterable(
                    seeds.stream().map(Address::toString).toList()));
    ActorTestKit kit =
        ActorTestKit.create(
            "hub-cluster",
            cluster
                .withFallback(store.pekkoConfig())
                .withFallback(HubCluster.singleNode().withoutPath("pekko.cluster.seed-nodes"))
                .withFallback(ConfigFactory.load()));
    nodes.add(kit);
    return kit;
  }

  private ReferenceHub hub(ActorTestKit node) throws Exception {
    ReferenceHub h =
        ReferenceHub.start(
                node.system(),
                CONFIG,
                WsFixture.TOKENS,
                PROJECT,
                "127.0.0.1",
                0,
                PersistentHubJournal.open(node.system(), Duration.ofSeconds(20)))
            .toCompletableFuture()
            .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    hubs.add(h);
    return h;
  }

  @Test
  void everyNodeAnswersForTheBrainAndARunnerResumesWhenTheBrainsNodeIsDowned() throws Exception {
    HubStore store = HubStore.memory(); // one database for the JVM: every node's store
    store.migrate();
    ActorTestKit a = node(store, List.of());
    ReferenceHub hubA = hub(a); // a cluster of one so far: the brain starts here
    Address seed = Cluster.get(a.system()).selfMember().address();
    ActorTestKit b = node(store, List.of(seed));
    ActorTestKit c = node(store, List.of(seed));
    ReferenceHub hubB = hub(b);
    ReferenceHub hubC = hub(c);
    awaitUp(b, 3);
    awaitUp(c, 3);

    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    runner =
        RunnerClient.start(
            c.system(),
            new RunnerClient.Settings(
                hubC.runnerUrl() + "," + hubB.runnerUrl(),
                PROJECT,
                "0.1.0-test",
                // Two slots: both tasks run at once (one slot would queue the second).
                List.of(Capabilities.ACK, Capabilities.ERROR_FRAMES, Capabilities.SLOTS_PREFIX + 2),
                TokenSource.fixed(WsFixture.token(PROJECT, "r-1")),
                CONFIG,
                null));
    runner.inbound().runWith(Sink.foreach(inbox::add), c.system());
    awaitBody(hubB, "/v1/runners", body -> body.contains("\"connected\":true"));

    assertEquals(201, post(hubA, "/v1/tasks", task("t-1")).statusCode());
    assertEquals("t-1", assertInstanceOf(TaskAssign.class, next(inbox)).taskId());
    awaitBody(hubB, "/v1/tasks", body -> body.contains("\"id\":\"t-1\""));
    BlockingQueue<String> watched = watch(hubB, "t-1");
    for (int i = 1; i <= 5; i++) {
      runner.send(note("t-1", i)).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
    assertEquals(ids(1, 5), take(watched, 5), "streamed through B while the brain is on A");

    assertEquals(201, post(hubA, "/v1/tasks", task("t-2")).statusCode());
    assertEquals("t-2", assertInstanceOf(TaskAssign.class, next(inbox)).taskId());
    assertEquals(202, post(hubB, "/v1/tasks/t-2/cancel", "").statusCode());
    assertEquals("t-2", assertInstanceOf(TaskCancel.class, next(inbox)).taskId());
    runner.send(report("t-2", "canceled")).toCompletableFuture().get(20, TimeUnit.SECONDS);
    awaitBody(hubB, "/v1/tasks/t-2", body -> body.contains("\"state\":\"canceled\""));

    // Node A goes: downed, as the split-brain resolver downs a node that was killed.
    Cluster.get(b.system()).manager().tell(new Down(seed));
    a.system().getWhenTerminated().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    for (int i = 6; i <= 10; i++) {
      // Sent while the brain moves: the runner keeps them and replays what was not acknowledged.
      runner.send(note("t-1", i));
    }
    runner.send(report("t-1", "done"));

    List<String> rest = take(watched, 6);
    List<String> expected = new ArrayList<>(ids(6, 10));
    expected.add("11:report");
    assertEquals(expected, rest, "every event once, in order, across the move");
    for (ReferenceHub survivor : List.of(hubB, hubC)) {
      JsonNode t1 = JSON.readTree(awaitBody(survivor, "/v1/tasks/t-1", s -> s.contains("done")));
      assertEquals("done", t1.get("state").asText());
      assertEquals(11, t1.get("events").asInt(), "ten progress events and one report");
      assertEquals("done", t1.get("report").get("status").asText());
    }
    assertTrue(inbox.stream().noneMatch(f -> f instanceof TaskAssign), "no task assigned twice");
  }

  private static void awaitUp(ActorTestKit node, int members) throws InterruptedException {
    Await.until(
        () ->
            java.util.stream.StreamSupport.stream(
                    Cluster.get(node.system()).state().getMembers().spliterator(), false)
                .filter(m -> m.status() == MemberStatus.up())
                .count(),
        up -> up == members,
        WAIT,
        "the cluster reaching " + members + " members up");
  }

  private static String task(String id) {
    return "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"" + id + "\"}";
  }

  private static TaskProgress note(String task, int i) {
    return new TaskProgress(task, "text", JsonNodeFactory.instance.objectNode().put("i", i));
  }

  private static TaskReport report(String task, String status) {
    return new TaskReport(TaskReportBody.builder(task, status, UsageSplit.ZERO).build());
  }

  private static List<String> ids(int from, int to) {
    List<String> out = new ArrayList<>();
    for (int i = from; i <= to; i++) {
      out.add(i + ":text");
    }
    return out;
  }

  private static SequencedFrame next(BlockingQueue<SequencedFrame> inbox) throws Exception {
    SequencedFrame f = inbox.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertTrue(f != null, "no frame reached the runner");
    return f;
  }

  private HttpRequest.Builder request(ReferenceHub hub, String path) {
    return HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
        .header("Authorization", "Bearer " + apiToken)
        .timeout(WAIT);
  }

  private HttpResponse<String> post(ReferenceHub hub, String path, String body) throws Exception {
    return http.send(
        request(hub, path).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private String awaitBody(ReferenceHub hub, String path, java.util.function.Predicate<String> ok)
      throws Exception {
    HttpResponse<String> r =
        Await.until(
            () -> http.send(request(hub, path).GET().build(), HttpResponse.BodyHandlers.ofString()),
            got -> got.statusCode() == 200 && ok.test(got.body()),
            WAIT,
            path + " matching"); // a 503 while the brain moves is looked at again
    return r.body();
  }

  /** The task's SSE stream on {@code hub}: {@code id:event} per event, in arrival order. */
  private BlockingQueue<String> watch(ReferenceHub hub, String task) throws Exception {
    HttpResponse<Stream<String>> r =
        http.send(
            HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks/" + task + "/events"))
                .header("Authorization", "Bearer " + apiToken)
                .build(),
            HttpResponse.BodyHandlers.ofLines());
    assertEquals(200, r.statusCode());
    streams.add(r.body());
    BlockingQueue<String> out = new LinkedBlockingQueue<>();
    String[] event = {""};
    CompletableFuture.runAsync(
        () ->
            r.body()
                .forEach(
                    l -> {
                      if (l.startsWith("event:")) {
                        event[0] = l.substring(6).trim();
                      } else if (l.startsWith("id:")) {
                        out.add(l.substring(3).trim() + ":" + event[0]);
                      }
                    }));
    return out;
  }

  private static List<String> take(BlockingQueue<String> q, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String s = q.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertTrue(s != null, "event " + (i + 1) + " of " + n + " after " + out);
      out.add(s);
    }
    return out;
  }
}
