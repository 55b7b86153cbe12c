package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.placement.Attempt;
import io.capsule.hub.runner.RawRunners;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.token.TokenScope;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A wire id is longer than its task's id ({@link Attempt}), so a task's assignment grows each time
 * it is placed again. A task that would fit the runners' frame cap as its first attempt but not
 * under its longest wire id is refused at {@code POST /v1/tasks} (413, {@code E-PRO-005}): before,
 * it was accepted and ended {@code too_large} the first time it was placed again, after it ran. One
 * whose assignment under its longest wire id is exactly the cap is accepted.
 */
class AttemptFrameCapTest {
  private static final String PROJECT = "p-cap";
  private static final int CAP = 4096;

  private final ActorTestKit kit = ActorTestKit.create("cap", ConfigFactory.load());
  private final HttpClient http = HttpClient.newHttpClient();
  private ReferenceHub hub;

  @BeforeEach
  void start() throws Exception {
    hub =
        ReferenceHub.start(
                kit.system(),
                RawRunners.fast().frameCapBytes(CAP).build(),
                RawRunners.TOKENS,
                PROJECT,
                "127.0.0.1",
                0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  @Test
  void aTaskThatFitsOnlyAsItsFirstAttemptIsRefusedAtSubmit() throws Exception {
    String id = "t-" + "i".repeat(198); // the longest id: the attempt's suffix weighs the most
    int firstBase = assignBytes(id, "", false);
    int longestBase = assignBytes(id, "", true);
    assertTrue(longestBase - firstBase >= 18, "the longest suffix: " + (longestBase - firstBase));

    String fitsOnlyFirst = "g".repeat(CAP - 5 - firstBase);
    assertEquals(CAP - 5, assignBytes(id, fitsOnlyFirst, false));
    HttpResponse<String> refused = submit(id, fitsOnlyFirst);
    assertEquals(413, refused.statusCode(), refused.body());
    assertTrue(refused.body().contains("E-PRO-005"), refused.body());
    assertTrue(refused.body().contains("longest attempt id"), refused.body());
    assertTrue(refused.body().contains("frame cap of " + CAP), refused.body());
    assertEquals(404, get("/v1/tasks/" + id).statusCode(), "nothing kept");

    String fitsEvery = "g".repeat(CAP - longestBase);
    assertEquals(CAP, assignBytes(id, fitsEvery, true));
    HttpResponse<String> accepted = submit(id, fitsEvery);
    assertEquals(201, accepted.statusCode(), head(accepted.body()));
  }

  /**
   * The task.assign's size (seq 1) of the short-shape task, as its first or its longest attempt.
   */
  private static int assignBytes(String id, String goal, boolean longest) throws Exception {
    TaskRequest req = TaskRequest.parse(body(id, goal.isEmpty() ? "g" : goal), () -> id);
    ObjectNode spec = req.spec().json();
    spec.put("goal", goal);
    if (longest) {
      spec.put("id", Attempt.longest(id));
    }
    return FrameCodec.shared()
        .encode(new TaskAssign(TaskSpec.wrap(spec), req.role(), req.invocation()).withSeq(1))
        .length;
  }

  private static String head(String text) {
    return text.substring(0, Math.min(400, text.length()));
  }

  private static String body(String id, String goal) {
    return "{\"capsule\":\"hello\",\"goal\":\"" + goal + "\",\"id\":\"" + id + "\"}";
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
        .header(
            "Authorization",
            "Bearer "
                + RawRunners.TOKENS.issue(
                    PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(5)))
        .timeout(Duration.ofSeconds(20));
  }

  private HttpResponse<String> submit(String id, String goal) throws Exception {
    return http.send(
        request("/v1/tasks").POST(HttpRequest.BodyPublishers.ofString(body(id, goal))).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
  }
}
