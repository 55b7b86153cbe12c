package io.capsule.hub.runner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.protocol.token.TokenScope;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The task API of a hub under test, called over real HTTP with a token of the project: what the
 * socket tests used to write out each for itself.
 */
final class HubCalls {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private final String project;
  // A supplier, so a test that restarts its hub keeps one HubCalls.
  private final Supplier<String> apiUrl;

  HubCalls(String project, Supplier<String> apiUrl) {
    this.project = project;
    this.apiUrl = apiUrl;
  }

  HttpClient http() {
    return http;
  }

  /** A request to {@code path} with a fresh token of {@code scope}, bounded by the fixture wait. */
  HttpRequest.Builder request(TokenScope scope, String path) {
    String token = WsFixture.TOKENS.issue(project, Optional.empty(), scope, Duration.ofMinutes(5));
    return HttpRequest.newBuilder(URI.create(apiUrl.get() + path))
        .header("Authorization", "Bearer " + token)
        .timeout(WsFixture.WAIT);
  }

  /** {@code method path} with {@code body} (none when null) and a token of {@code scope}. */
  HttpResponse<String> send(TokenScope scope, String method, String path, String body)
      throws IOException, InterruptedException {
    return http.send(
        request(scope, path)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** {@code GET path} with an {@code api} token. */
  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return send(TokenScope.API, "GET", path, null);
  }

  /** {@code POST /v1/tasks} with an {@code api} token. */
  HttpResponse<String> submit(String body) throws IOException, InterruptedException {
    return send(TokenScope.API, "POST", "/v1/tasks", body);
  }

  /** The task as {@code GET /v1/tasks/ID} shows it. */
  JsonNode task(String id) throws IOException, InterruptedException {
    return json(get("/v1/tasks/" + id));
  }

  /** Asks for the task (bounded by the fixture's wait) until it matches. */
  JsonNode awaitTask(String id, Predicate<JsonNode> match)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + WsFixture.WAIT.toNanos();
    JsonNode t = task(id);
    while (!match.test(t)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the task never matched: " + t);
      }
      t = task(id);
    }
    return t;
  }

  static JsonNode json(HttpResponse<String> r) throws IOException {
    return JSON.readTree(r.body());
  }
}
