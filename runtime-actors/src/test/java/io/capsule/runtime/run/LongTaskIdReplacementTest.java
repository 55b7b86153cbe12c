package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.hub.ReferenceHub;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.RunnerClient;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.driver.DriverLoading;
import io.capsule.runtime.hub.AssignReader;
import io.capsule.runtime.hub.HubLink;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task with the longest id the API takes (200 characters) run again after its runner was gone
 * past {@code dead-after}, end to end on loopback: the reference hub and its task API, a runner
 * that takes the first attempt and goes away, and a real runner (runner client, HubLink, a run with
 * its run directory and trace) that gets the second attempt under its 210-character wire id and
 * finishes it. Every place the wire id reaches takes it: the protocol's task schema (no length),
 * the runner's run directory (named after the id made file-safe and cut to 64 characters), the
 * frames and the hub's view, which shows the attempt and reports under the task's own id.
 */
class LongTaskIdReplacementTest {
  private static final String PROJECT = "p-long";
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(30);

  /** 200 characters, the API's limit, with a character a file name must not hold. */
  private static final String ID = "t:" + "x".repeat(198);

  private final ActorTestKit kit = ActorTestKit.create();
  private final ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(5));
  private final HttpClient http = HttpClient.newHttpClient();
  private ReferenceHub hub;
  private RunnerClient gone;
  private RunnerClient finisher;

  @AfterEach
  void stop() throws Exception {
    for (RunnerClient c : new RunnerClient[] {gone, finisher}) {
      if (c != null) {
        c.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
      }
    }
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
  }

  @Test
  void aTwoHundredCharacterIdRunsAgainAsItsSecondAttemptOnAnotherRunner(@TempDir Path root)
      throws Exception {
    assertEquals(200, ID.length());
    ProtocolConfig config =
        ProtocolConfig.builder()
            .heartbeatIdle(Duration.ofMillis(300))
            .deadAfter(Duration.ofSeconds(1))
            .build();
    hub =
        ReferenceHub.start(kit.system(), config, tokens, PROJECT, "127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);

    // The first runner takes the task (it announces no capsules: it takes any) and runs nothing.
    gone = client("r-gone", config);
    awaitConnected("r-gone");
    HttpResponse<String> submitted =
        post("/v1/tasks", "{\"capsule\":\"hello\",\"goal\":\"Say hi\",\"id\":\"" + ID + "\"}");
    assertEquals(201, submitted.statusCode(), submitted.body());
    assertEquals(PROJECT + "/r-gone", JSON.readTree(submitted.body()).get("runner").asText());
    gone.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    gone = null;
    awaitTask(t -> "queued".equals(t.get("state").asText())); // taken back past dead-after

    // A real runner gets the second attempt under its 210-character wire id and finishes it.
    Path runs = Files.createDirectories(root.resolve("runs"));
    finisher = realRunner("r-finisher", config, root, runs);
    JsonNode done = awaitTask(t -> "done".equals(t.get("state").asText()));
    String wireId = ID + "~attempt-2";
    assertEquals(210, wireId.length());
    assertEquals(2, done.get("attempt").asInt(), done.toString());
    assertEquals(wireId, done.get("attempt_id").asText(), done.toString());
    assertEquals(PROJECT + "/r-finisher", done.get("runner").asText(), done.toString());
    assertEquals(ID, done.get("report").get("task_id").asText(), done.toString());
    assertEquals(ID, done.get("task").get("id").asText(), "the API shows the task's own id");

    List<Path> dirs;
    try (Stream<Path> s = Files.list(runs)) {
      dirs = s.toList();
    }
    assertEquals(1, dirs.size(), dirs.toString());
    String name = dirs.get(0).getFileName().toString();
    assertTrue(name.startsWith("t_" + "x".repeat(62) + "-"), name);
    assertTrue(name.getBytes(StandardCharsets.UTF_8).length <= 255, name);
  }

  private RunnerClient client(String runnerId, ProtocolConfig config) {
    return RunnerClient.start(
        kit.system(),
        RunnerClient.Settings.of(
            hub.runnerUrl(),
            PROJECT,
            "0.1.0-test",
            TokenSource.fixed(tokens.issue(PROJECT, Optional.of(runnerId), Duration.ofMinutes(5))),
            config));
  }

  private RunnerClient realRunner(String runnerId, ProtocolConfig config, Path root, Path runs)
      throws Exception {
    Path capsules = Files.createDirectories(root.resolve("capsules"));
    Path hello = Files.createDirectories(capsules.resolve("hello"));
    Files.writeString(hello.resolve("murmur.yaml"), RunnerAssignsTest.MANIFEST);
    Path scenario =
        Files.writeString(
            root.resolve("scenario.txt"), "!read-task\n" + RunnerAssignsTest.TURN_END + "\n");
    DriverLoading loading =
        m -> new DriverLoading.Loaded(play(scenario).describe(), () -> play(scenario));
    EmbeddedRuntime runtime =
        EmbeddedRuntime.create(kit.system(), RunLimits.defaults(runs), loading);
    RunnerClient client = client(runnerId, config);
    kit.spawn(HubLink.create(client, runtime.guardian(), new AssignReader(capsules), 2));
    return client;
  }

  private static PlayDriver play(Path scenario) {
    return new PlayDriver(RunFixture.script(), scenario, InterruptMethod.SIGNAL_INT, false);
  }

  private void awaitConnected(String runnerId) throws Exception {
    await(
        () -> JSON.readTree(get("/v1/runners").body()),
        rs -> {
          for (JsonNode r : rs) {
            if (r.get("id").asText().equals(runnerId) && r.get("connected").asBoolean()) {
              return true;
            }
          }
          return false;
        });
  }

  private JsonNode awaitTask(Predicate<JsonNode> ok) throws Exception {
    return await(() -> JSON.readTree(get("/v1/tasks/" + ID).body()), ok);
  }

  /** The hub's HTTP answer is no message a test can wait on: looks again until it fits. */
  private static JsonNode await(Look look, Predicate<JsonNode> ok) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    JsonNode last = null;
    while (System.nanoTime() < deadline) {
      last = look.get();
      if (ok.test(last)) {
        return last;
      }
      TimeUnit.MILLISECONDS.sleep(50);
    }
    throw new AssertionError("not within " + WAIT + ": " + last);
  }

  @FunctionalInterface
  private interface Look {
    JsonNode get() throws Exception;
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
        .header(
            "Authorization",
            "Bearer "
                + tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(5)))
        .timeout(WAIT);
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(
        request(path).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
