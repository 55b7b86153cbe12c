package io.capsule.realharness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code claude} contained ({@code capsule.harness.containment = required}: bubblewrap and
 * socat, installed by CI): with the fake Messages API in {@code capabilities.network.allow} it
 * answers as uncontained; with the API's host missing from it the egress proxy refuses, and the
 * refusal ({@code W-CAP-052}) is in the run's events. The API is plain HTTP on 127.0.0.1, so every
 * model request goes through the egress proxy as a plain-HTTP request on a persistent connection: a
 * retry after a 429 and the request after a bridged tool call come on the connection the first
 * request used, and must reach the API in origin form.
 */
final class ContainedClaudeIT {
  private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
  private static final Map<String, String> REQUIRED =
      Map.of("CAPSULE_HARNESS_CONTAINMENT", "required");

  @TempDir Path tmp;
  private FakeAnthropic api;
  private Path home;

  @BeforeAll
  static void onlyTheRealBinaryInsideALoopbackOnlyNamespace() throws SocketException {
    Suite.requireBinaryInLoopbackOnlyNamespace(RealClaudeIT.CLAUDE);
  }

  @BeforeEach
  void fakeApi() throws IOException {
    api = FakeAnthropic.start();
    home = Files.createDirectories(tmp.resolve("home"));
  }

  @AfterEach
  void stop() {
    api.close();
  }

  @Test
  void anAllowlistedApiIsReachedFromInsideTheSandbox() throws Exception {
    api.then(
        req ->
            MessageStream.start("msg_contained_1", req.path("model").asText(), RealClaudeIT.USAGE)
                .text("Hello from inside.")
                .end("end_turn", 5));
    Path capsule =
        TestCapsule.write(tmp.resolve("capsule"), RealClaudeIT.CLAUDE, api.baseUrl(), 0, List.of());
    CapsuleRunProcess.Result r =
        CapsuleRunProcess.start(capsule, home, tmp.resolve("runs"), "Say hello.", REQUIRED)
            .finish(RUN_TIMEOUT);

    assertEquals(0, r.exit(), r::toString);
    assertEquals("done", r.finished().path("status").asText(), r::toString);
    assertEquals("Hello from inside.", r.finished().path("result").asText());
    JsonNode containment = Suite.traceRecord(tmp.resolve("runs"), "harness_containment");
    assertTrue(containment.toString().contains("\"contained\":true"), containment::toString);
    assertTrue(
        r.named("warning").stream().noneMatch(w -> w.path("code").asText().startsWith("W-CAP")),
        r::toString);
    assertEquals(List.of(), Suite.processesWithHome(home), "nothing of the run is left");
  }

  /**
   * The API's host is not in the allowlist: the harness has no DNS and no route inside, its only
   * way out is the proxy, which refuses with a 403 that the run reports.
   */
  @Test
  void anApiHostMissingFromTheAllowlistIsRefusedVisibly() throws Exception {
    api.otherwise(
        req ->
            MessageStream.start("msg_never", req.path("model").asText(), RealClaudeIT.USAGE)
                .text("This must not be reached.")
                .end("end_turn", 5));
    String unlisted = "http://fake-anthropic.test:" + java.net.URI.create(api.baseUrl()).getPort();
    Path capsule =
        TestCapsule.write(
            tmp.resolve("capsule"), RealClaudeIT.CLAUDE, unlisted, 0, List.of(), List.of());
    CapsuleRunProcess.Result r =
        CapsuleRunProcess.start(capsule, home, tmp.resolve("runs"), "Say hello.", REQUIRED)
            .finish(RUN_TIMEOUT);

    assertNotEquals("done", r.finished().path("status").asText(), r::toString);
    List<JsonNode> refusals =
        r.named("warning").stream()
            .filter(w -> w.path("code").asText().equals("W-CAP-052"))
            .toList();
    assertTrue(!refusals.isEmpty(), r::toString);
    assertTrue(
        refusals.get(0).path("message").asText().contains("fake-anthropic.test"), r::toString);
    JsonNode traced = Suite.traceRecord(tmp.resolve("runs"), "egress_refused");
    assertEquals("fake-anthropic.test", traced.path("host").asText(), traced::toString);
    assertEquals(List.of(), api.messages(), "the API was never reached");
  }

  @Test
  void a429FromThePlainHttpApiIsRetriedAndTheContainedTurnEndsDone() throws Exception {
    api.then(req -> Reply.rateLimited(1))
        .then(
            req ->
                MessageStream.start(
                        "msg_contained_429", req.path("model").asText(), RealClaudeIT.USAGE)
                    .text("Made it from inside.")
                    .end("end_turn", 3));
    Path capsule =
        TestCapsule.write(tmp.resolve("capsule"), RealClaudeIT.CLAUDE, api.baseUrl(), 2, List.of());
    CapsuleRunProcess.Result r =
        CapsuleRunProcess.start(capsule, home, tmp.resolve("runs"), "Say hello.", REQUIRED)
            .finish(RUN_TIMEOUT);

    assertEquals(0, r.exit(), r::toString);
    assertEquals("done", r.finished().path("status").asText(), r::toString);
    assertEquals("Made it from inside.", r.finished().path("result").asText(), r::toString);
    assertFalse(r.named("retry").isEmpty(), r::toString);
    // Both attempts reached the API in origin form (an absolute-form line would show its URL).
    assertEquals(
        List.of("POST /v1/messages?beta=true", "POST /v1/messages?beta=true"), api.allRequests());
    assertContainedWithoutRefusals(r);
  }

  /**
   * A tool offered through the bridge ({@code capabilities.shell.allow}): the model asks for it,
   * the harness calls it, and the next model request, carrying its result, reaches the API and the
   * turn ends done. The tool reaches nothing but the run's own directories, so this holds whether
   * bridged tools run inside the sandbox or beside it.
   */
  @Test
  void aBridgedToolCallCompletesAndTheContainedTurnEndsDone() throws Exception {
    api.then(
            req ->
                MessageStream.start(
                        "msg_contained_tool_1", req.path("model").asText(), RealClaudeIT.USAGE)
                    .toolUse(
                        "toolu_contained_1",
                        RealClaudeIT.bridgeTool(req, "echo"),
                        "{\"args\": [\"hello-\", \"contained\"]}")
                    .end("tool_use", 9))
        .then(
            req ->
                MessageStream.start(
                        "msg_contained_tool_2", req.path("model").asText(), RealClaudeIT.USAGE)
                    .text("The tool answered from inside.")
                    .end("end_turn", 7));
    Path capsule =
        TestCapsule.write(
            tmp.resolve("capsule"), RealClaudeIT.CLAUDE, api.baseUrl(), 0, List.of("echo"));
    CapsuleRunProcess.Result r =
        CapsuleRunProcess.start(capsule, home, tmp.resolve("runs"), "Use the echo tool.", REQUIRED)
            .finish(RUN_TIMEOUT);

    assertEquals(0, r.exit(), r::toString);
    assertEquals("done", r.finished().path("status").asText(), r::toString);
    assertEquals(
        "The tool answered from inside.", r.finished().path("result").asText(), r::toString);
    assertEquals(
        List.of("POST /v1/messages?beta=true", "POST /v1/messages?beta=true"), api.allRequests());
    JsonNode second = api.messages().get(1).body();
    JsonNode toolResult =
        StreamSupport.stream(second.path("messages").spliterator(), false)
            .flatMap(m -> StreamSupport.stream(m.path("content").spliterator(), false))
            .filter(c -> "tool_result".equals(c.path("type").asText()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no tool_result in " + second));
    assertEquals("toolu_contained_1", toolResult.path("tool_use_id").asText());
    assertTrue(
        toolResult.path("content").toString().contains("hello- contained"), toolResult::toString);
    assertFalse(toolResult.path("is_error").asBoolean(false), toolResult::toString);
    assertEquals(1, r.named("tool_called").size(), r::toString);
    assertEquals(1, r.named("tool_resulted").size(), r::toString);
    assertContainedWithoutRefusals(r);
  }

  /** The run was contained, the proxy refused nothing, and nothing of the run is left. */
  private void assertContainedWithoutRefusals(CapsuleRunProcess.Result r) throws IOException {
    JsonNode containment = Suite.traceRecord(tmp.resolve("runs"), "harness_containment");
    assertTrue(containment.toString().contains("\"contained\":true"), containment::toString);
    assertTrue(
        r.named("warning").stream().noneMatch(w -> w.path("code").asText().startsWith("W-CAP")),
        r::toString);
    assertEquals(List.of(), Suite.processesWithHome(home), "nothing of the run is left");
  }
}
