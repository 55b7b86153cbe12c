package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.hub.queue.QueueEvent;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RawRunners;
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
 * When the queue's store refuses a write, the API says so with its code ({@code E-HUB-004}, 503)
 * instead of a bare 500, for a submission and for a cancel, and the hub goes on answering.
 */
class StoreRefusalTest {
  private static final String PROJECT = "p-store-refusal";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(20);
  private final ActorTestKit kit = ActorTestKit.create();
  private final HttpClient http = HttpClient.newHttpClient();
  private final String token =
      RawRunners.TOKENS.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(5));
  private final RefusingQueueStore store = new RefusingQueueStore();
  private HubServer brain;
  private String apiUrl;

  @BeforeEach
  void start() throws Exception {
    brain = HubServer.create(kit.system(), RawRunners.fast().build(), RawRunners.TOKENS);
    apiUrl = HandApi.bind(kit.system(), brain, PROJECT, store).url();
  }

  @AfterEach
  void stop() throws Exception {
    brain.close().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  @Test
  void aCancelTheStoreDidNotKeepIsA503WithItsCodeAndTheHubGoesOn() throws Exception {
    assertEquals(201, submit("t-1").statusCode(), "queued: no runner is connected");
    store.refuse(true);
    HttpResponse<String> canceled =
        send(request("/v1/tasks/t-1/cancel").POST(HttpRequest.BodyPublishers.noBody()));
    assertEquals(503, canceled.statusCode(), canceled.body());
    JsonNode body = JSON.readTree(canceled.body());
    assertEquals("E-HUB-004", body.get("code").asText(), canceled.body());
    assertTrue(body.get("error").asText().contains("t-1"), canceled.body());
    assertTrue(body.get("error").asText().contains("the disk is full"), canceled.body());
    assertTrue(body.hasNonNull("hint"), canceled.body());

    HttpResponse<String> submitted = submit("t-2");
    assertEquals(503, submitted.statusCode(), submitted.body());
    assertEquals("E-HUB-004", JSON.readTree(submitted.body()).get("code").asText());

    store.refuse(false);
    assertEquals(200, send(request("/v1/tasks/t-1").GET()).statusCode(), "the hub still answers");
  }

  /**
   * The 503 left the task canceled in this hub but not in the store, so a restart would queue it
   * again: the cancel sent again must write what the store lacks and answer as a kept cancel, not
   * "already finished" (409) with the store still missing it.
   */
  @Test
  void aCancelSentAgainAfterA503IsKeptAndAnsweredAsACancel() throws Exception {
    assertEquals(201, submit("t-3").statusCode(), "queued: no runner is connected");
    store.refuse(true);
    HttpResponse<String> refused =
        send(request("/v1/tasks/t-3/cancel").POST(HttpRequest.BodyPublishers.noBody()));
    assertEquals(503, refused.statusCode(), refused.body());
    assertTrue(
        JSON.readTree(refused.body()).get("error").asText().contains("send the cancel again"),
        refused.body());
    assertFalse(
        store.kept(QueueEvent.Kind.CANCELED, "t-3"), "nothing kept while the store refuses");

    store.refuse(false);
    HttpResponse<String> again =
        send(request("/v1/tasks/t-3/cancel").POST(HttpRequest.BodyPublishers.noBody()));
    assertEquals(200, again.statusCode(), again.body());
    assertEquals("canceled", JSON.readTree(again.body()).get("state").asText(), again.body());
    assertTrue(
        store.kept(QueueEvent.Kind.CANCELED, "t-3"),
        "the store now holds the cancel a restart needs: " + store);

    HttpResponse<String> third =
        send(request("/v1/tasks/t-3/cancel").POST(HttpRequest.BodyPublishers.noBody()));
    assertEquals(
        409, third.statusCode(), "once kept, the task is simply finished: " + third.body());
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(apiUrl + path))
        .header("Authorization", "Bearer " + token)
        .timeout(WAIT);
  }

  private HttpResponse<String> submit(String id) throws Exception {
    return send(
        request("/v1/tasks")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"" + id + "\"}")));
  }

  private HttpResponse<String> send(HttpRequest.Builder r) throws Exception {
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }
}
