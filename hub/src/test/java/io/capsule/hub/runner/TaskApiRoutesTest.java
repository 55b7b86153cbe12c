package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenScope;
import java.net.URI;
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
 * {@code POST /v1/tasks} refusing a bad body before anything happens, and {@code DELETE
 * /v1/tasks/{id}}, over a real socket on 127.0.0.1 with a raw runner: a refused body reaches no
 * runner; delete is admin-only, refuses a running task and an unknown one with their codes, and a
 * deleted task is no longer shown, listed or streamed, and its id is not reused.
 */
class TaskApiRoutesTest {
  private static final String PROJECT = "p-api";
  private static final FrameCodec CODEC = FrameCodec.shared();
  private final ActorTestKit kit = ActorTestKit.create();
  private ReferenceHub hub;
  private HubCalls api;
  private WsFixture.RawPeer runner;

  @BeforeEach
  void start() throws Exception {
    // The raw runners answer no ping: a long dead-after keeps them connected while a loaded
    // machine serves the first requests slowly (2 s dropped them here).
    hub = WsFixture.hub(kit.system(), PROJECT, Duration.ofSeconds(60), HubJournal.none());
    api = new HubCalls(PROJECT, hub::apiUrl);
    runner =
        WsFixture.runner(kit.system(), hub.runnerUrl(), PROJECT, "r-a", "capsule:hello", "slots:4");
  }

  @AfterEach
  void stop() throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  private HttpResponse<String> send(TokenScope scope, String method, String path, String body)
      throws Exception {
    return api.send(scope, method, path, body);
  }

  private static JsonNode json(HttpResponse<String> r) throws Exception {
    return HubCalls.json(r);
  }

  @Test
  void aBadBodyIsA400WithItsPathAndCodeAndReachesNoRunner() throws Exception {
    HttpResponse<String> r =
        send(TokenScope.API, "POST", "/v1/tasks", "{\"capsule\":\"hello\",\"task\":\"Say hi\"}");
    assertEquals(400, r.statusCode(), r.body());
    assertEquals("E-PRO-004", json(r).get("code").asText());
    assertTrue(
        json(r).get("error").asText().contains("$.task: unknown key; did you mean \"goal\"?"),
        r.body());

    HttpResponse<String> budget =
        send(
            TokenScope.API,
            "POST",
            "/v1/tasks",
            "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-b\",\"budget\":{\"max_turns\":-1}}");
    assertEquals(400, budget.statusCode(), budget.body());
    assertTrue(budget.body().contains("$.budget.max_turns"), budget.body());
    assertEquals(404, send(TokenScope.API, "GET", "/v1/tasks/t-b", null).statusCode());

    // A good task after them is the first assign the runner sees: nothing before it was placed.
    assertEquals(
        201,
        send(
                TokenScope.API,
                "POST",
                "/v1/tasks",
                "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-ok\"}")
            .statusCode());
    String first = WsFixture.await(runner.received, s -> s.contains("task.assign"));
    assertTrue(first.contains("\"t-ok\""), first);
  }

  @Test
  void aRunnerTokenOpensNoRouteOfTheTaskApi() throws Exception {
    String[][] routes = {
      {"GET", "/v1/tasks"},
      {"POST", "/v1/tasks"},
      {"GET", "/v1/tasks/t-x"},
      {"GET", "/v1/tasks/t-x/events"},
      {"POST", "/v1/tasks/t-x/cancel"},
      {"DELETE", "/v1/tasks/t-x"},
      {"GET", "/v1/runners"}
    };
    for (String[] route : routes) {
      String body = route[0].equals("POST") ? "{\"capsule\":\"hello\",\"goal\":\"g\"}" : null;
      HttpResponse<String> r = send(TokenScope.RUNNER, route[0], route[1], body);
      assertEquals(403, r.statusCode(), route[0] + " " + route[1] + ": " + r.body());
      assertEquals("E-PRO-012", json(r).get("code").asText(), route[0] + " " + route[1]);
    }
    assertTrue(
        runner.received.stream().noneMatch(s -> s.contains("task.assign")), "nothing was placed");
  }

  @Test
  void deleteNeedsAnAdminTokenAndNamesUnknownAndRunningTasks() throws Exception {
    HttpResponse<String> api = send(TokenScope.API, "DELETE", "/v1/tasks/t-none", null);
    assertEquals(403, api.statusCode(), api.body());
    assertEquals("E-PRO-012", json(api).get("code").asText());

    HttpResponse<String> unknown = send(TokenScope.ADMIN, "DELETE", "/v1/tasks/t-none", null);
    assertEquals(404, unknown.statusCode(), unknown.body());
    assertEquals("E-API-002", json(unknown).get("code").asText());

    assertEquals(
        201,
        send(
                TokenScope.API,
                "POST",
                "/v1/tasks",
                "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-run\"}")
            .statusCode());
    HttpResponse<String> running = send(TokenScope.ADMIN, "DELETE", "/v1/tasks/t-run", null);
    assertEquals(409, running.statusCode(), running.body());
    assertEquals("E-API-001", json(running).get("code").asText());
    assertEquals(200, send(TokenScope.API, "GET", "/v1/tasks/t-run", null).statusCode());
  }

  @Test
  void aFinishedTaskIsForgottenAndItsIdIsNotReused() throws Exception {
    assertEquals(
        201,
        send(
                TokenScope.API,
                "POST",
                "/v1/tasks",
                "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}")
            .statusCode());
    WsFixture.await(runner.received, s -> s.contains("task.assign") && s.contains("t-1"));
    runner.send(
        CODEC.encodeToString(
            new TaskReport(
                    TaskReportBody.builder("t-1", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
                .withSeq(1)));
    // The event stream ends with the report: once it returned, the hub's book has the report.
    HttpResponse<String> events = send(TokenScope.API, "GET", "/v1/tasks/t-1/events", null);
    assertTrue(events.body().contains("event:report"), events.body());

    HttpResponse<String> deleted = send(TokenScope.ADMIN, "DELETE", "/v1/tasks/t-1", null);
    assertEquals(204, deleted.statusCode(), deleted.body());
    for (String gone : new String[] {"/v1/tasks/t-1", "/v1/tasks/t-1/events"}) {
      HttpResponse<String> r = send(TokenScope.API, "GET", gone, null);
      assertEquals(404, r.statusCode(), gone);
      assertEquals("E-API-002", json(r).get("code").asText(), r.body());
    }
    assertEquals("[]", send(TokenScope.API, "GET", "/v1/tasks", null).body());
    assertEquals(404, send(TokenScope.ADMIN, "DELETE", "/v1/tasks/t-1", null).statusCode());

    HttpResponse<String> again =
        send(
            TokenScope.API,
            "POST",
            "/v1/tasks",
            "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}");
    assertEquals(409, again.statusCode(), again.body());
    assertEquals("E-API-003", json(again).get("code").asText());
  }

  /** Asserts {@code r} is a refusal with {@code status}, {@code code} and a hint. */
  private static void refused(HttpResponse<String> r, int status, String code) throws Exception {
    assertEquals(status, r.statusCode(), r.body());
    assertEquals(code, json(r).get("code").asText(), r.body());
    assertTrue(json(r).get("error").asText().startsWith(code + " "), r.body());
    assertTrue(!json(r).get("hint").asText().isBlank(), r.body());
  }

  @Test
  void everyRefusalOfThePlacementFlowCarriesItsCodeAndWhatToDo() throws Exception {
    String task = "{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-c\"}";
    assertEquals(201, send(TokenScope.API, "POST", "/v1/tasks", task).statusCode());
    refused(send(TokenScope.API, "POST", "/v1/tasks", task), 409, "E-API-004");

    HttpResponse<String> nobody =
        send(
            TokenScope.API,
            "POST",
            "/v1/tasks",
            "{\"capsule\":\"hello\",\"goal\":\"g\",\"runner\":\"r-ghost\"}");
    refused(nobody, 404, "E-HUB-003");
    assertTrue(json(nobody).get("error").asText().contains("'r-ghost'"), nobody.body());

    WsFixture.await(runner.received, s -> s.contains("task.assign") && s.contains("t-c"));
    runner.send(
        CODEC.encodeToString(
            new TaskReport(
                    TaskReportBody.builder("t-c", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
                .withSeq(1)));
    assertTrue(
        send(TokenScope.API, "GET", "/v1/tasks/t-c/events", null).body().contains("event:report"));
    refused(send(TokenScope.API, "POST", "/v1/tasks/t-c/cancel", null), 409, "E-API-005");

    String other =
        WsFixture.TOKENS.issue("p-other", Optional.empty(), TokenScope.API, Duration.ofMinutes(5));
    HttpResponse<String> foreign =
        api.http()
            .send(
                HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks"))
                    .header("Authorization", "Bearer " + other)
                    .timeout(WsFixture.WAIT)
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    refused(foreign, 403, "E-API-006");

    HttpResponse<String> anonymous =
        api.http()
            .send(
                HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks"))
                    .timeout(WsFixture.WAIT)
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(401, anonymous.statusCode(), anonymous.body());
    assertTrue(json(anonymous).get("code").asText().startsWith("E-PRO-"), anonymous.body());
  }
}
