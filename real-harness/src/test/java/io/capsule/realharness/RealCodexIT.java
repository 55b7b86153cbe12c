package io.capsule.realharness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code capsule run --json} with the built-in codex driver against the real {@code codex} 0.169.0
 * (pinned in package.json) and a fake Responses API reached through a custom provider given in the
 * capsule's {@code extra_args} (the minimal custom-endpoint capsule of the driver's README). Runs
 * only inside a loopback-only network namespace ({@code run-suite.sh}).
 */
final class RealCodexIT {
  static final Path CODEX = Path.of(System.getProperty("realharness.codex", "codex"));
  private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
  static final String KEY_VAR = "FAKE_PROVIDER_KEY";
  static final String KEY = "sk-capsule-real-harness-dummy";

  @TempDir Path tmp;
  private FakeModelApi api;
  private Path home;
  private Path runs;

  @BeforeAll
  static void onlyTheRealBinaryInsideALoopbackOnlyNamespace() throws SocketException {
    Suite.requireBinaryInLoopbackOnlyNamespace(CODEX);
  }

  @BeforeEach
  void fakeApi() throws IOException {
    api =
        FakeModelApi.start(
            "/v1/responses"::equals,
            req -> ResponsesStream.error(500, "server_error", "no_script", "no scripted reply"));
    home = Files.createDirectories(tmp.resolve("home"));
    Files.createDirectories(home.resolve(".codex"));
    runs = tmp.resolve("runs");
  }

  @AfterEach
  void stop() {
    api.close();
  }

  @Test
  void aTextAnswerEndsDoneWithItsTextAndTheUsageSplit() throws Exception {
    api.then(
        req ->
            ResponsesStream.start("resp_text")
                .text("msg_1", "Hello from ", "the fake model.")
                .completed(123, 45, 17, 5));
    CapsuleRunProcess.Result r = run(capsule("text"), "Say hello.");

    assertEquals(0, r.exit(), r::toString);
    JsonNode finished = r.finished();
    assertEquals("done", finished.path("status").asText(), r::toString);
    assertEquals("Hello from the fake model.", finished.path("result").asText());
    JsonNode usage = finished.path("usage");
    assertEquals(78, usage.path("fresh_input").asInt(), usage::toString);
    assertEquals(45, usage.path("cache_read").asInt(), usage::toString);
    // Codex's output_tokens (17) include its reasoning (5): the runtime reports them apart.
    assertEquals(12, usage.path("output").asInt(), usage::toString);
    assertEquals(5, usage.path("thinking").asInt(), usage::toString);
    assertTrue(r.nonJsonLines().isEmpty(), r::toString);

    // What Codex sent: the provider's key, our system prompt as developer instructions, the task,
    // and analytics off (the driver's telemetry default).
    assertEquals(List.of(), api.unknownRequests());
    FakeModelApi.Received request = api.received().get(0);
    assertEquals("Bearer " + KEY, request.headers().get("authorization"));
    assertTrue(request.body().path("input").toString().contains(TestCapsule.SYSTEM_PROMPT));
    assertTrue(request.body().path("input").toString().contains("Say hello."));
    assertTrue(
        request
            .headers()
            .getOrDefault("x-codex-turn-metadata", "")
            .contains("\"analytics_enabled\":false"),
        request.headers()::toString);
  }

  /**
   * The API-key capsule of the driver's README: Codex's built-in {@code openai} provider with
   * {@code CODEX_API_KEY} (what {@code codex exec} reads; {@code OPENAI_API_KEY} in the environment
   * sends no key at all); only {@code openai_base_url} points it at the fake instead of
   * api.openai.com. The doctor agrees that a run could start.
   */
  @Test
  void anApiKeyWithTheBuiltInProviderAnswersAndTheDoctorAgrees() throws Exception {
    api.then(
        req -> ResponsesStream.start("resp_key").text("msg_k", "Keyed.").completed(10, 0, 2, 0));
    HarnessCapsule capsule =
        HarnessCapsule.codex(Suite.commandFor(CODEX, tmp, "codex-apikey"))
            .allow(api.baseUrl())
            .model("gpt-fake")
            .env("CODEX_API_KEY", KEY)
            .extraArg("--config=openai_base_url=\"" + api.baseUrl() + "/v1\"");
    Path dir = capsule.write(tmp.resolve("capsule"));
    CapsuleRunProcess.Doctor d = CapsuleRunProcess.doctor(dir, home, RUN_TIMEOUT);
    assertEquals(0, d.exit(), d.output());
    CapsuleRunProcess.Result r =
        CapsuleRunProcess.start(dir, home, runs, "Say hello.").finish(RUN_TIMEOUT);

    assertEquals(0, r.exit(), r::toString);
    assertEquals("Keyed.", r.finished().path("result").asText(), r::toString);
    assertEquals("Bearer " + KEY, api.received().get(0).headers().get("authorization"));
  }

  /**
   * The subscription capsule of the driver's README: a ChatGPT sign-in saved in {@code
   * ~/.codex/auth.json} (tokens valid far into the future, so no refresh), no key at all, and only
   * {@code chatgpt_base_url} pointing at a fake ChatGPT backend. Codex first asks that backend
   * which origin serves the account ({@code GET /backend-api/wham/accounts/check}) and accepts only
   * an {@code https} one, so the fake serves HTTPS with a throwaway CA given as {@code
   * CODEX_CA_CERTIFICATE}, and names itself. The doctor's {@code codex login status} says logged
   * in, and the run answers.
   */
  @Test
  void aChatGptSignInAnswersAndTheDoctorSaysLoggedIn() throws Exception {
    FakeTls tls = FakeTls.create(tmp.resolve("tls"));
    try (FakeModelApi chatgpt =
        FakeModelApi.startHttps(
            "/backend-api/codex/responses"::equals,
            req -> ResponsesStream.error(500, "server_error", "no_script", "no scripted reply"),
            tls.serverContext())) {
      chatgpt.route("/backend-api/wham/accounts/check", req -> accountsCheck(chatgpt.baseUrl()));
      chatgpt.then(
          req ->
              ResponsesStream.start("resp_chatgpt")
                  .text("msg_c", "Signed in with ChatGPT.")
                  .completed(20, 0, 3, 0));
      String token = SavedLogins.codexChatGpt(home);
      Path ca = Files.copy(tls.caPem(), home.resolve(".codex/capsule-fake-ca.pem"));
      Path dir =
          HarnessCapsule.codex(Suite.commandFor(CODEX, tmp, "codex-chatgpt"))
              .allow(chatgpt.baseUrl())
              .model("gpt-fake")
              .env("CODEX_CA_CERTIFICATE", ca.toString())
              .extraArg("--config=chatgpt_base_url=\"" + chatgpt.baseUrl() + "/backend-api/\"")
              .write(tmp.resolve("capsule"));

      CapsuleRunProcess.Doctor d = CapsuleRunProcess.doctor(dir, home, RUN_TIMEOUT);
      assertEquals(0, d.exit(), d.output());
      assertTrue(d.output().matches("(?s).*\\blogin\\s+logged in\\b.*"), d.output());
      CapsuleRunProcess.Result r =
          CapsuleRunProcess.start(dir, home, runs, "Say hello.").finish(RUN_TIMEOUT);

      assertEquals(0, r.exit(), r::toString);
      assertEquals("Signed in with ChatGPT.", r.finished().path("result").asText(), r::toString);
      assertEquals(20, r.finished().path("usage").path("fresh_input").asInt(), r::toString);
      assertEquals(1, chatgpt.received().size(), chatgpt.unknownRequests()::toString);
      FakeModelApi.Received request = chatgpt.received().get(0);
      assertEquals("Bearer " + token, request.headers().get("authorization"));
      assertEquals(SavedLogins.CODEX_ACCOUNT, request.headers().get("chatgpt-account-id"));
      assertTrue(
          chatgpt.routedRequests().contains("GET /backend-api/wham/accounts/check"),
          chatgpt.routedRequests()::toString);
    }
  }

  /** The account list naming {@code origin} as the backend that serves the saved account. */
  private static FakeModelApi.Answer accountsCheck(String origin) {
    com.fasterxml.jackson.databind.node.ObjectNode body = MessageStream.JSON.createObjectNode();
    body.putArray("accounts")
        .addObject()
        .put("id", SavedLogins.CODEX_ACCOUNT)
        .put("workspace_backend_origin", origin)
        .put("account_routing_override", "NO_CONSTRAINT");
    return new FakeModelApi.Answer.Json(200, body);
  }

  /** The doctor and a run agree on the suite's capsule: a run could start, and it does. */
  @Test
  void theDoctorSaysARunCouldStart() throws Exception {
    Path dir = capsule("doctor").write(tmp.resolve("capsule"));
    CapsuleRunProcess.Doctor d = CapsuleRunProcess.doctor(dir, home, RUN_TIMEOUT);
    assertEquals(0, d.exit(), d.output());
    assertTrue(d.output().contains("ready: a run could start"), d.output());
  }

  @Test
  void a401FailsAsAnAuthFailure() throws Exception {
    api.otherwise(
        req ->
            ResponsesStream.error(
                401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"));
    CapsuleRunProcess.Result r = run(capsule("auth401"), "Say hello.");

    assertEquals(1, r.exit(), r::toString);
    assertEquals("E-RUN-033:auth", r.finished().path("failure_type").asText(), r::toString);
  }

  /**
   * Codex's own words after a 429 are "exceeded retry limit, last status: 429 Too Many Requests".
   */
  @Test
  void a429FailsAsAQuotaFailure() throws Exception {
    api.otherwise(
        req -> ResponsesStream.error(429, "requests", "rate_limit_exceeded", "Rate limit reached"));
    CapsuleRunProcess.Result r = run(capsule("rate429"), "Say hello.");

    assertEquals(1, r.exit(), r::toString);
    assertEquals("E-RUN-033:quota", r.finished().path("failure_type").asText(), r::toString);
  }

  @Test
  void ctrlCMidStreamCancelsTheRunAndLeavesNoCodexProcess() throws Exception {
    api.then(req -> ResponsesStream.start("resp_stall").stall());
    CapsuleRunProcess run =
        CapsuleRunProcess.start(
            capsule("interrupt").write(tmp.resolve("capsule")), home, runs, "Go on.");
    // Codex prints nothing while a response streams (it reports a message only when complete),
    // so "mid-stream" is: the fake has the request and is holding the stream open.
    awaitRequest();
    List<ProcessHandle> harness = run.process().descendants().toList();
    new ProcessBuilder("kill", "-INT", Long.toString(run.process().pid()))
        .inheritIO()
        .start()
        .waitFor();
    CapsuleRunProcess.Result r = run.finish(RUN_TIMEOUT);

    assertEquals(1, r.exit(), r::toString);
    assertEquals("canceled", r.finished().path("failure_type").asText(), r::toString);
    JsonNode exit = Suite.traceRecord(runs, "harness_exit");
    assertEquals("canceled", exit.path("cause").asText(), exit::toString);
    for (ProcessHandle p : harness) {
      p.onExit().get(10, TimeUnit.SECONDS);
    }
    assertEquals(List.of(), Suite.processesWithHome(home), "processes left with the run's HOME");
  }

  @Test
  void aToolCallGoesThroughTheBridgeAndItsResultReachesTheModel() throws Exception {
    api.then(
            req ->
                ResponsesStream.start("resp_tool_1")
                    .functionCall(
                        "fc_1",
                        "call_fake_1",
                        bridgeNamespace(req, "echo"),
                        "echo",
                        "{\"args\":[\"hello-bridge\"]}")
                    .completed(50, 0, 9, 0))
        .then(
            req ->
                ResponsesStream.start("resp_tool_2")
                    .text("msg_2", "The tool said hello-bridge.")
                    .completed(60, 0, 7, 0));
    CapsuleRunProcess.Result r = run(capsule("mcp").tools("echo"), "Use the echo tool.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals("done", r.finished().path("status").asText(), r::toString);
    assertEquals(2, api.received().size(), api.received()::toString);
    JsonNode output =
        StreamSupport.stream(api.received().get(1).body().path("input").spliterator(), false)
            .filter(i -> "function_call_output".equals(i.path("type").asText()))
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("no function_call_output in " + api.received().get(1)));
    assertEquals("call_fake_1", output.path("call_id").asText());
    assertTrue(output.toString().contains("hello-bridge"), output::toString);
    assertEquals(1, r.named("tool_called").size(), r::toString);
    assertEquals(1, r.named("tool_resulted").size(), r::toString);
  }

  /**
   * The custom provider: Codex's {@code model_providers} table given by {@code --config}, its key
   * in {@code FAKE_PROVIDER_KEY}; one retry per stream so a failing API ends in seconds.
   */
  private HarnessCapsule capsule(String scenario) throws IOException {
    return HarnessCapsule.codex(Suite.commandFor(CODEX, tmp, "codex-" + scenario))
        .allow(api.baseUrl())
        .model("gpt-fake")
        .env(KEY_VAR, KEY)
        .extraArg("--config=model_provider=\"capsule-fake\"")
        .extraArg(
            "--config=model_providers.capsule-fake={name=\"capsule-fake\",base_url=\""
                + api.baseUrl()
                + "/v1\",env_key=\""
                + KEY_VAR
                + "\",wire_api=\"responses\",request_max_retries=0,stream_max_retries=1}");
  }

  private CapsuleRunProcess.Result run(HarnessCapsule capsule, String task) throws Exception {
    Path dir = capsule.write(tmp.resolve("capsule"));
    return CapsuleRunProcess.start(dir, home, runs, task).finish(RUN_TIMEOUT);
  }

  private void awaitRequest() throws InterruptedException {
    long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
    while (api.received().isEmpty() && System.nanoTime() < deadline) {
      TimeUnit.MILLISECONDS.sleep(100);
    }
    assertFalse(api.received().isEmpty(), "codex never asked the fake API");
    // The stream is open and stalled once its first frame is out; give the CLI a moment to read it.
    TimeUnit.MILLISECONDS.sleep(500);
  }

  /** The namespace ({@code mcp__<server>}) that offers the bridge tool {@code bare}. */
  private static String bridgeNamespace(JsonNode request, String bare) {
    return StreamSupport.stream(request.path("tools").spliterator(), false)
        .filter(t -> "namespace".equals(t.path("type").asText()))
        .filter(t -> t.path("name").asText().startsWith("mcp__"))
        .filter(
            t ->
                StreamSupport.stream(t.path("tools").spliterator(), false)
                    .anyMatch(f -> bare.equals(f.path("name").asText())))
        .map(t -> t.path("name").asText())
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no mcp__* namespace offers " + bare + ": " + request.path("tools")));
  }
}
