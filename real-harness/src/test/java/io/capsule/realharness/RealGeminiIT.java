package io.capsule.realharness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
 * {@code capsule run --json} with the built-in gemini driver against the real {@code gemini} 0.61.0
 * (pinned in package.json) and a fake Gemini API reached through {@code GOOGLE_GEMINI_BASE_URL}
 * with an API key (the minimal custom-endpoint capsule of the driver's README). Runs only inside a
 * loopback-only network namespace ({@code run-suite.sh}), with run directories in a private folder
 * (Gemini CLI skips settings below a folder others may write).
 */
final class RealGeminiIT {
  static final Path GEMINI = Path.of(System.getProperty("realharness.gemini", "gemini"));
  private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
  static final String KEY = "capsule-real-harness-dummy-key";
  static final String MODEL = "gemini-2.5-flash";
  static final String GOOGLE_TOKEN = "ya29.capsule-real-harness-dummy";

  @TempDir Path tmp;
  private FakeModelApi api;
  private Path home;
  private Path runs;

  @BeforeAll
  static void onlyTheRealBinaryInsideALoopbackOnlyNamespace() throws SocketException {
    Suite.requireBinaryInLoopbackOnlyNamespace(GEMINI);
  }

  @BeforeEach
  void fakeApi() throws IOException {
    api =
        FakeModelApi.start(
            p -> p.startsWith("/v1beta/models/") && p.endsWith(":streamGenerateContent"),
            req -> GeminiStream.error(500, "INTERNAL", "no scripted reply"));
    // No work root is set: the runs go to capsule run's private default below this HOME, where
    // Gemini CLI reads the driver's settings (under the old default, /tmp, it skipped them).
    home = Suite.privateHome();
    Files.createDirectories(home.resolve(".gemini"));
    runs = Suite.defaultRuns(home);
  }

  @AfterEach
  void stop() throws IOException {
    api.close();
    Suite.deleteTree(home);
  }

  @Test
  void aTextAnswerEndsDoneWithTheStreamedTextAndTheUsageSplit() throws Exception {
    api.then(req -> GeminiStream.start().text("Hello from ", "the fake model.").stop(123, 45, 17));
    CapsuleRunProcess.Result r = run(capsule("text"), "Say hello.");

    assertEquals(0, r.exit(), r::toString);
    JsonNode finished = r.finished();
    assertEquals("done", finished.path("status").asText(), r::toString);
    assertEquals("Hello from the fake model.", finished.path("result").asText());
    JsonNode usage = finished.path("usage");
    assertEquals(78, usage.path("fresh_input").asInt(), usage::toString);
    assertEquals(45, usage.path("cache_read").asInt(), usage::toString);
    assertEquals(17, usage.path("output").asInt(), usage::toString);
    assertEquals(
        "Hello from the fake model.",
        r.named("text_delta").stream()
            .map(e -> e.path("delta").asText())
            .reduce("", String::concat),
        r::toString);
    assertTrue(r.nonJsonLines().isEmpty(), r::toString);
    // The default work root, made private by the run: Gemini CLI read the settings below it.
    assertEquals(
        "rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(runs)), "runs");

    FakeModelApi.Received request = api.received().get(0);
    assertEquals(KEY, request.headers().get("x-goog-api-key"), request.headers()::toString);
    assertTrue(request.path().contains("/models/" + MODEL + ":"), request.path());
    assertEquals(
        TestCapsule.SYSTEM_PROMPT,
        request.body().path("systemInstruction").path("parts").path(0).path("text").asText().trim(),
        request.body().path("systemInstruction")::toString);
  }

  /** Without a capsule prompt Gemini CLI keeps its own, which teaches it its tools. */
  @Test
  void aCapsuleWithoutASystemPromptKeepsGeminiClisOwn() throws Exception {
    api.then(req -> GeminiStream.start().text("Hi.").stop(10, 0, 2));
    CapsuleRunProcess.Result r = run(capsule("noprompt").noSystemPrompt(), "Say hi.");

    assertEquals(0, r.exit(), r::toString);
    String system = api.received().get(0).body().path("systemInstruction").toString();
    assertTrue(system.length() > 1000, "Gemini CLI's own prompt should be sent: " + system);
  }

  /**
   * The subscription capsule: a Google sign-in ({@code auth_type: oauth-personal}) against a fake
   * Code Assist API ({@code CODE_ASSIST_ENDPOINT}). Gemini CLI sets the user up first ({@code
   * loadCodeAssist}, then {@code onboardUser} for a new user), reads the quota and experiments,
   * then streams the answer from {@code streamGenerateContent}, all with the sign-in's token as a
   * bearer. The token is given as {@code GOOGLE_CLOUD_ACCESS_TOKEN} with {@code
   * GOOGLE_GENAI_USE_GCA}: the saved {@code oauth_creds.json} cannot start offline (next test).
   */
  @Test
  void aGoogleSignInAnswersThroughCodeAssistAndTheDoctorAgrees() throws Exception {
    try (FakeModelApi codeAssist = codeAssist()) {
      codeAssist.then(
          req -> GeminiStream.startCodeAssist().text("Signed in ", "with Google.").stop(30, 0, 5));
      Path dir = googleCapsule(codeAssist, "google").write(tmp.resolve("capsule"));

      CapsuleRunProcess.Doctor d = CapsuleRunProcess.doctor(dir, home, RUN_TIMEOUT);
      assertEquals(0, d.exit(), d.output());
      assertTrue(d.output().contains("ready: a run could start"), d.output());
      CapsuleRunProcess.Result r =
          CapsuleRunProcess.startWithDefaultWorkRoot(dir, home, "Say hello.").finish(RUN_TIMEOUT);

      assertEquals(0, r.exit(), r::toString);
      assertEquals("Signed in with Google.", r.finished().path("result").asText(), r::toString);
      assertEquals(30, r.finished().path("usage").path("fresh_input").asInt(), r::toString);
      assertEquals(5, r.finished().path("usage").path("output").asInt(), r::toString);
      FakeModelApi.Received request = codeAssist.received().get(0);
      assertEquals("Bearer " + GOOGLE_TOKEN, request.headers().get("authorization"));
      assertEquals(MODEL, request.body().path("model").asText(), request::toString);
      assertEquals("capsule-fake-project", request.body().path("project").asText());
      List<String> setup = codeAssist.routedRequests();
      assertEquals("POST /v1internal:loadCodeAssist", setup.get(0), setup::toString);
      assertTrue(setup.contains("POST /v1internal:onboardUser"), setup::toString);
    }
  }

  /**
   * A saved Google sign-in alone ({@code ~/.gemini/oauth_creds.json}, token valid until 2100)
   * cannot start offline: Gemini CLI first checks the token at {@code
   * https://oauth2.googleapis.com/tokeninfo} (google-auth-library's fixed endpoint; no setting
   * moves it), and without an answer it asks for an interactive sign-in, exit 41. The run says
   * {@code auth}; the Code Assist API is never asked.
   */
  @Test
  void aSavedGoogleSignInAloneCannotStartOffline() throws Exception {
    try (FakeModelApi codeAssist = codeAssist()) {
      SavedLogins.geminiGoogle(home, GOOGLE_TOKEN);
      Path dir =
          HarnessCapsule.gemini(Suite.commandFor(GEMINI, tmp, "gemini-savedgoogle"))
              .allow(codeAssist.baseUrl())
              .model(MODEL)
              .config("auth_type", "oauth-personal")
              .env("CODE_ASSIST_ENDPOINT", codeAssist.baseUrl())
              .write(tmp.resolve("capsule"));
      CapsuleRunProcess.Result r =
          CapsuleRunProcess.startWithDefaultWorkRoot(dir, home, "Say hello.").finish(RUN_TIMEOUT);

      assertEquals(1, r.exit(), r::toString);
      assertEquals("E-RUN-033:auth", r.finished().path("failure_type").asText(), r::toString);
      assertEquals(41, Suite.traceRecord(runs, "harness_exit").path("code").asInt(), r::toString);
      assertEquals(List.of(), codeAssist.received());
      assertEquals(List.of(), codeAssist.routedRequests());
    }
  }

  /**
   * A fake Code Assist API: {@code loadCodeAssist} answers a new user (no current tier, a default
   * free tier) until {@code onboardUser}, then the onboarded user and project; quota and
   * experiments are empty.
   */
  private static FakeModelApi codeAssist() throws IOException {
    FakeModelApi api =
        FakeModelApi.start(
            "/v1internal:streamGenerateContent"::equals,
            req -> GeminiStream.error(500, "INTERNAL", "no scripted reply"));
    java.util.concurrent.atomic.AtomicBoolean onboarded =
        new java.util.concurrent.atomic.AtomicBoolean();
    api.route(
        "/v1internal:loadCodeAssist",
        req -> {
          ObjectNode body = MessageStream.JSON.createObjectNode();
          if (onboarded.get()) {
            body.putObject("currentTier").put("id", "free-tier").put("name", "Fake free tier");
            body.put("cloudaicompanionProject", "capsule-fake-project");
          } else {
            body.putArray("allowedTiers")
                .addObject()
                .put("id", "free-tier")
                .put("name", "Fake free tier")
                .put("isDefault", true);
          }
          return new FakeModelApi.Answer.Json(200, body);
        });
    api.route(
        "/v1internal:onboardUser",
        req -> {
          onboarded.set(true);
          ObjectNode body = MessageStream.JSON.createObjectNode().put("done", true);
          body.putObject("response")
              .putObject("cloudaicompanionProject")
              .put("id", "capsule-fake-project");
          return new FakeModelApi.Answer.Json(200, body);
        });
    api.route(
        "/v1internal:retrieveUserQuota",
        req -> {
          ObjectNode body = MessageStream.JSON.createObjectNode();
          body.putArray("buckets");
          return new FakeModelApi.Answer.Json(200, body);
        });
    api.route(
        "/v1internal:listExperiments",
        req -> new FakeModelApi.Answer.Json(200, MessageStream.JSON.createObjectNode()));
    return api;
  }

  /** The Google sign-in capsule: oauth-personal, the token and the endpoint in the env. */
  private HarnessCapsule googleCapsule(FakeModelApi codeAssist, String scenario)
      throws IOException {
    return HarnessCapsule.gemini(Suite.commandFor(GEMINI, tmp, "gemini-" + scenario))
        .allow(codeAssist.baseUrl())
        .model(MODEL)
        .config("auth_type", "oauth-personal")
        .env("CODE_ASSIST_ENDPOINT", codeAssist.baseUrl())
        .env("GOOGLE_GENAI_USE_GCA", "true")
        .env("GOOGLE_CLOUD_ACCESS_TOKEN", GOOGLE_TOKEN);
  }

  /** The doctor and a run agree on the suite's capsule: a run could start, and it does. */
  @Test
  void theDoctorSaysARunCouldStart() throws Exception {
    Path dir = capsule("doctor").write(tmp.resolve("capsule"));
    CapsuleRunProcess.Doctor d = CapsuleRunProcess.doctor(dir, home, RUN_TIMEOUT);
    assertEquals(0, d.exit(), d.output());
    assertTrue(d.output().contains("ready: a run could start"), d.output());
  }

  /** Gemini exits 145 (401 modulo 256) by itself: the runtime reads it as a code, not signal 17. */
  @Test
  void a401FailsAsAnAuthFailureAndItsExitIsACode() throws Exception {
    api.otherwise(
        req ->
            GeminiStream.error(
                401, "UNAUTHENTICATED", "API key not valid. Please pass a valid API key."));
    CapsuleRunProcess.Result r = run(capsule("auth401"), "Say hello.");

    assertEquals(1, r.exit(), r::toString);
    assertEquals("E-RUN-033:auth", r.finished().path("failure_type").asText(), r::toString);
    JsonNode exit = Suite.traceRecord(runs, "harness_exit");
    assertEquals(145, exit.path("code").asInt(), exit::toString);
    assertTrue(exit.path("signal").isNull() || exit.path("signal").isMissingNode(), exit::toString);
  }

  /**
   * An API that always answers 429: the driver's {@code general.maxAttempts} (3 by default) ends
   * the run as {@code quota} in seconds, where Gemini CLI alone retries for minutes.
   */
  @Test
  void anAlways429ApiEndsAsQuotaWithinABound() throws Exception {
    api.otherwise(
        req ->
            GeminiStream.error(
                429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."));
    long start = System.nanoTime();
    CapsuleRunProcess.Result r = run(capsule("rate429"), "Say hello.");
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertEquals(1, r.exit(), r::toString);
    assertEquals("E-RUN-033:quota", r.finished().path("failure_type").asText(), r::toString);
    assertEquals(3, api.received().size(), api.received()::toString);
    assertTrue(took.compareTo(Duration.ofSeconds(60)) < 0, "took " + took);
  }

  @Test
  void ctrlCMidStreamCancelsTheRunAndLeavesNoGeminiProcess() throws Exception {
    api.then(req -> GeminiStream.start().text("Starting a long answer", "…").stall());
    CapsuleRunProcess run =
        CapsuleRunProcess.startWithDefaultWorkRoot(
            capsule("interrupt").write(tmp.resolve("capsule")), home, "Go on.");
    JsonNode delta =
        run.awaitEvent(e -> "text_delta".equals(e.path("event").asText()), RUN_TIMEOUT)
            .orElseThrow(
                () -> new AssertionError("no text_delta before the stall: " + run.events()));
    assertEquals("Starting a long answer", delta.path("delta").asText());
    List<ProcessHandle> harness = run.process().descendants().toList();
    new ProcessBuilder("kill", "-INT", Long.toString(run.process().pid()))
        .inheritIO()
        .start()
        .waitFor();
    CapsuleRunProcess.Result r = run.finish(RUN_TIMEOUT);

    assertEquals(1, r.exit(), r::toString);
    assertEquals("canceled", r.finished().path("failure_type").asText(), r::toString);
    for (ProcessHandle p : harness) {
      p.onExit().get(10, TimeUnit.SECONDS);
      assertFalse(p.isAlive(), p.pid() + " outlived the canceled run");
    }
    assertEquals(List.of(), Suite.processesWithHome(home), "processes left with the run's HOME");
  }

  @Test
  void aToolCallGoesThroughTheBridgeAndItsResultReachesTheModel() throws Exception {
    api.then(
            req ->
                GeminiStream.start()
                    .functionCall(
                        bridgeTool(req, "echo"),
                        MessageStream.JSON
                            .createObjectNode()
                            .set("args", MessageStream.JSON.createArrayNode().add("hello-bridge")))
                    .stop(50, 0, 9))
        .then(req -> GeminiStream.start().text("The tool said hello-bridge.").stop(60, 0, 7));
    CapsuleRunProcess.Result r = run(capsule("mcp").tools("echo"), "Use the echo tool.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals("done", r.finished().path("status").asText(), r::toString);
    assertEquals(2, api.received().size(), api.received()::toString);
    JsonNode response =
        StreamSupport.stream(api.received().get(1).body().path("contents").spliterator(), false)
            .flatMap(c -> StreamSupport.stream(c.path("parts").spliterator(), false))
            .filter(p -> p.has("functionResponse"))
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("no functionResponse in " + api.received().get(1).body()));
    assertTrue(response.toString().contains("hello-bridge"), response::toString);
    assertEquals(1, r.named("tool_called").size(), r::toString);
    assertEquals(1, r.named("tool_resulted").size(), r::toString);
  }

  /** The endpoint and key through the driver config's env; the driver infers gemini-api-key. */
  private HarnessCapsule capsule(String scenario) throws IOException {
    return HarnessCapsule.gemini(Suite.commandFor(GEMINI, tmp, "gemini-" + scenario))
        .allow(api.baseUrl())
        .model(MODEL)
        .env("GOOGLE_GEMINI_BASE_URL", api.baseUrl())
        .env("GEMINI_API_KEY", KEY);
  }

  private CapsuleRunProcess.Result run(HarnessCapsule capsule, String task) throws Exception {
    Path dir = capsule.write(tmp.resolve("capsule"));
    return CapsuleRunProcess.startWithDefaultWorkRoot(dir, home, task).finish(RUN_TIMEOUT);
  }

  /** The declared function whose name ends with the bridge tool's bare name. */
  private static String bridgeTool(JsonNode request, String bare) {
    return StreamSupport.stream(request.path("tools").spliterator(), false)
        .flatMap(t -> StreamSupport.stream(t.path("functionDeclarations").spliterator(), false))
        .map(f -> f.path("name").asText())
        .filter(n -> n.endsWith(bare) && !n.equals(bare))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError("no *" + bare + " function declared: " + request.path("tools")));
  }
}
