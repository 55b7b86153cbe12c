package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.cli.hub.ReferenceHub;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.Disconnect;
import io.capsule.protocol.ws.RunnerKey;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
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
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PROJECT = "demo";
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);

  @TempDir static Path capsules;

  private final HttpClient http = HttpClient.newHttpClient();
  private ActorSystem<Void> hubSystem;
  private ActorSystem<Void> runnerSystem;
  private ReferenceHub hub;
  private RunnerNode runner;
  private String token;

  @BeforeAll
  void start() throws Exception {
    copyHello();
    capsule("slow", slowHarness());
    capsule("stream", streamHarness(400));
    CapsuleSettings settings = CapsuleSettings.load();
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    token = tokens.issue(PROJECT, Optional.empty(), Duration.ofMinutes(30));
    hubSystem = ActorSystem.create(Behaviors.empty(), "hub");
    runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
    hub =
        ReferenceHub.start(
                hubSystem, RuntimeWiring.protocol(settings), tokens, PROJECT, "127.0.0.1", 0)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    CompletableFuture<Void> connected = new CompletableFuture<>();
    runner =
        RunnerNode.start(
            runnerSystem,
            settings,
            hub.runnerUrl(),
            PROJECT,
            TokenSource.fixed(token),
            capsules,
            4,
            s -> {
              if (s.status() == ConnectionState.Status.CONNECTED) {
                connected.complete(null);
              }
            });
    connected.get(60, TimeUnit.SECONDS);
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
    JsonNode created = submit("{\"capsule\":\"hello\",\"goal\":\"Say hello\",\"id\":\"t-hello\"}");
    assertEquals("t-hello", created.get("id").asText());
    List<Sse> events = follow("t-hello", 0, id -> {});
    assertContiguous(events);
    Sse report = events.get(events.size() - 1);
    assertEquals("report", report.event());
    assertEquals("done", report.data().get("status").asText());
    assertEquals("Hello! You asked: Say hello", report.data().get("summary_business").asText());
    assertTrue(events.stream().anyMatch(e -> e.event().equals("text")));
    assertEquals("done", get("/v1/tasks/t-hello").get("state").asText());

    // Resuming from an event id gives exactly the rest, once.
    List<Sse> tail = follow("t-hello", events.size() - 3, id -> {});
    assertEquals(events.subList(events.size() - 3, events.size()), tail);
  }

  @Test
  void aTaskCanceledMidRunReportsCanceledAndItsHarnessIsGone() throws Exception {
    submit("{\"capsule\":\"slow\",\"goal\":\"take your time\",\"id\":\"t-slow\"}");
    List<Sse> events =
        follow(
            "t-slow",
            0,
            new LongConsumer() {
              boolean sent;

              @Override
              public void accept(long id) {
                if (!sent && id >= 4) { // running, and the harness has spoken
                  sent = true;
                  assertTrue(post("/v1/tasks/t-slow/cancel").get("canceled").asBoolean());
                }
              }
            });
    JsonNode report = events.get(events.size() - 1).data();
    assertEquals("failed", report.get("status").asText());
    assertEquals("canceled", report.get("failure_type").asText());
    assertTrue(harnessesAlive("slow-harness-marker").isEmpty(), "the harness outlived its run");
    JsonNode again = post("/v1/tasks/t-slow/cancel");
    assertEquals(
        false, again.get("canceled").asBoolean(), "a cancel after the report changes nothing");
  }

  @Test
  void repeatedConnectionCutsLoseAndRepeatNothing() throws Exception {
    submit("{\"capsule\":\"stream\",\"goal\":\"count\",\"id\":\"t-stream\"}");
    RunnerKey key = new RunnerKey(PROJECT, RunnerKey.DEFAULT_RUNNER);
    Disconnect[] cuts = {Disconnect.CLOSE, Disconnect.DROP, Disconnect.ABORT, Disconnect.DROP};
    long[] at = {40, 120, 200, 300};
    List<Sse> events =
        follow(
            "t-stream",
            0,
            new LongConsumer() {
              int next;

              @Override
              public void accept(long id) {
                if (next < at.length && id >= at[next]) {
                  hub.hub().disconnect(key, cuts[next++]);
                }
              }
            });
    assertContiguous(events);
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
  void theApiAndTheRunnerEndpointRefuseAWrongToken() throws Exception {
    ProjectTokens other =
        new ProjectTokens(
            "another secret, also thirty-two bytes long".getBytes(StandardCharsets.UTF_8),
            Duration.ofSeconds(30));
    String wrong = other.issue(PROJECT, Optional.of("intruder"), Duration.ofMinutes(5));
    HttpResponse<String> api =
        http.send(
            HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/runners"))
                .header("Authorization", "Bearer " + wrong)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(401, api.statusCode());
    assertTrue(api.body().contains("E-PRO-007"), api.body());

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
            });
    try {
      ConnectionState s = refused.get(60, TimeUnit.SECONDS);
      assertTrue(s.reason().orElse("").contains("401"), s.toString());
    } finally {
      intruder.close();
    }
    for (JsonNode r : get("/v1/runners")) {
      assertTrue(!r.get("id").asText().equals("intruder"));
    }
  }

  // --- helpers ---

  record Sse(long id, String event, JsonNode data) {}

  /** Reads the task's SSE stream until the report; {@code onId} sees each id as it arrives. */
  private List<Sse> follow(String task, long after, LongConsumer onId) throws Exception {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks/" + task + "/events"))
            .header("Authorization", "Bearer " + token)
            .header("Last-Event-ID", Long.toString(after))
            .build();
    HttpResponse<java.util.stream.Stream<String>> resp =
        http.send(req, HttpResponse.BodyHandlers.ofLines());
    assertEquals(200, resp.statusCode());
    List<Sse> out = new ArrayList<>();
    String event = null;
    String data = null;
    long id = -1;
    Iterator<String> lines = resp.body().iterator();
    while (lines.hasNext()) {
      String line = lines.next();
      if (line.startsWith("data:")) {
        data = line.substring(5);
      } else if (line.startsWith("event:")) {
        event = line.substring(6);
      } else if (line.startsWith("id:")) {
        id = Long.parseLong(line.substring(3));
      } else if (line.isEmpty() && event == null) {
        data = null; // a keep-alive heartbeat, not an event
      } else if (line.isEmpty() && data != null) {
        out.add(new Sse(id, event, JSON.readTree(data)));
        onId.accept(id);
        if ("report".equals(event)) {
          break;
        }
        data = null;
        event = null;
      }
    }
    resp.body().close();
    return out;
  }

  private static void assertContiguous(List<Sse> events) {
    for (int i = 0; i < events.size(); i++) {
      assertEquals(i + 1, events.get(i).id(), "event ids must be 1..n with no gap or repeat");
    }
    assertEquals(1, events.stream().filter(e -> e.event().equals("report")).count());
  }

  private JsonNode submit(String body) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks"))
                .header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(201, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  private JsonNode get(String path) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
                .header("Authorization", "Bearer " + token)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  private JsonNode post(String path) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
                  .header("Authorization", "Bearer " + token)
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(r.body());
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<ProcessHandle> harnessesAlive(String marker) {
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().commandLine().orElse("").contains(marker))
        .toList();
  }

  private void copyHello() throws IOException {
    Path dir = Files.createDirectories(capsules.resolve("hello/harness"));
    Files.copy(Cli.HELLO.resolve("murmur.yaml"), capsules.resolve("hello/murmur.yaml"));
    Path script = dir.resolve("hello.sh");
    Files.copy(Cli.HELLO.resolve("harness/hello.sh"), script);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
  }

  private void capsule(String name, String harness) throws IOException {
    Path dir = Files.createDirectories(capsules.resolve(name));
    Files.writeString(
        dir.resolve("murmur.yaml"),
        "name: "
            + name
            + "\nversion: 0.1.0\nartifacts:\n  - name: jsonl\n    version: 0.6.0\n"
            + "    runtime: driver\n    builtin: jsonl\ninference:\n  transport: process\n"
            + "  driver:\n    artifact: jsonl\n  command: ./"
            + name
            + "-harness-marker.sh\ncapabilities:\n  env:\n    allow: [PATH]\n");
    Path script = dir.resolve(name + "-harness-marker.sh");
    Files.writeString(script, harness);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
  }

  /** Speaks, then works for 30 s unless interrupted; SIGINT ends the turn as canceled. */
  private static String slowHarness() {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "trap 'echo \"{\\\"type\\\":\\\"error\\\",\\\"kind\\\":\\\"canceled\\\",\\\"message\\\":\\\"stopped\\\"}\"; exit 130' INT\n"
        + "echo '{\"type\":\"delta\",\"text\":\"working\"}'\n"
        + "i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
        + "echo '{\"type\":\"result\",\"text\":\"too late\"}'\n";
  }

  /** Streams {@code n} one-word deltas, then the whole text as the result. */
  private static String streamHarness(int n) {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "i=1; text=''\n"
        + "while [ $i -le "
        + n
        + " ]; do\n"
        + "  w=\"w$i\"; [ $i -gt 1 ] && w=\" w$i\"\n"
        + "  printf '{\"type\":\"delta\",\"text\":\"%s\"}\\n' \"$w\"; text=\"$text$w\"\n"
        + "  [ $((i % 20)) -eq 0 ] && sleep 0.05\n"
        + "  i=$((i+1))\n"
        + "done\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$text\"\n";
  }
}
