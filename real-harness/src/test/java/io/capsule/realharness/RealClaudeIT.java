package io.capsule.realharness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code capsule run --json} with the built-in claude-code driver against the real {@code claude}
 * 2.1.328 (pinned in package.json) and {@link FakeAnthropic}. Runs only inside a loopback-only
 * network namespace ({@code run-suite.sh}): the real CLI must never reach a real network.
 */
final class RealClaudeIT {
  static final Path CLAUDE = Path.of(System.getProperty("realharness.claude", "claude"));
  private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
  static final MessageStream.InputUsage USAGE = new MessageStream.InputUsage(123, 45, 6);

  @TempDir Path tmp;
  private FakeAnthropic api;
  private Path home;

  @BeforeAll
  static void onlyTheRealBinaryInsideALoopbackOnlyNamespace() throws SocketException {
    assertTrue(
        Files.isExecutable(CLAUDE),
        CLAUDE + " is missing: run real-harness/run-suite.sh (it installs the pinned CLI)");
    List<String> outside =
        Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
            .filter(i -> !isLoopback(i))
            .map(NetworkInterface::getName)
            .toList();
    assertTrue(
        outside.isEmpty(),
        "the real CLI may only run in a loopback-only network namespace (run-suite.sh); found "
            + outside);
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
  void aTextAnswerEndsDoneWithTheStreamedTextAndTheServersUsageSplit() throws Exception {
    api.then(
        req ->
            MessageStream.start("msg_text_1", req.path("model").asText(), USAGE)
                .text("Hello from ", "the fake model.")
                .end("end_turn", 17));
    CapsuleRunProcess.Result r = run(capsule(10, List.of()), "Say hello.");

    assertEquals(0, r.exit(), r::toString);
    JsonNode finished = r.finished();
    assertEquals("done", finished.path("status").asText(), r::toString);
    assertEquals("Hello from the fake model.", finished.path("result").asText());
    JsonNode usage = finished.path("usage");
    assertEquals(123, usage.path("fresh_input").asInt(), usage::toString);
    assertEquals(45, usage.path("cache_read").asInt(), usage::toString);
    assertEquals(6, usage.path("cache_write").asInt(), usage::toString);
    assertEquals(17, usage.path("output").asInt(), usage::toString);
    assertEquals(1, finished.path("turns").asInt(), r::toString);
    assertEquals(
        "Hello from the fake model.",
        r.named("text_delta").stream()
            .map(e -> e.path("delta").asText())
            .reduce("", String::concat),
        r::toString);
    assertEquals("api-key", r.named("session_started").get(0).path("auth").asText(), r::toString);
    assertTrue(r.nonJsonLines().isEmpty(), r::toString);

    // What the harness sent: our key, the task as the user turn, our system prompt, no tools.
    // At startup, with the driver's telemetry switches, the CLI asks the API for nothing else.
    assertEquals(List.of("POST /v1/messages?beta=true"), api.allRequests());
    FakeAnthropic.Received request = api.messages().get(0);
    assertEquals(TestCapsule.API_KEY, request.headers().get("x-api-key"));
    assertTrue(request.body().path("messages").toString().contains("Say hello."));
    assertTrue(request.body().path("system").toString().contains(TestCapsule.SYSTEM_PROMPT));
    assertEquals("2023-06-01", request.headers().get("anthropic-version"));
    assertEquals(0, request.body().path("tools").size(), "a capsule without tools offers none");
  }

  /**
   * The subscription capsule: no key, the sign-in Claude Code saved in {@code
   * ~/.claude/.credentials.json} (an OAuth token valid far into the future). The CLI sends the
   * token as a bearer, says {@code apiKeySource: none}, so the run reports {@code auth:
   * subscription}; the doctor's {@code claude auth status} sees the same sign-in.
   */
  @Test
  void aSavedSubscriptionSignInAnswersAsSubscriptionAndTheDoctorSaysLoggedIn() throws Exception {
    api.then(
        req ->
            MessageStream.start("msg_sub_1", req.path("model").asText(), USAGE)
                .text("Signed in.")
                .end("end_turn", 3));
    String token = SavedLogins.claudeAi(home);
    Path capsule =
        TestCapsule.writeSubscription(tmp.resolve("capsule"), CLAUDE, api.baseUrl(), Map.of());

    CapsuleRunProcess.Doctor d = CapsuleRunProcess.doctor(capsule, home, RUN_TIMEOUT);
    assertEquals(0, d.exit(), d.output());
    assertTrue(d.output().matches("(?s).*\\blogin\\s+logged in\\b.*"), d.output());
    CapsuleRunProcess.Result r = run(capsule, "Say hello.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals("Signed in.", r.finished().path("result").asText(), r::toString);
    JsonNode usage = r.finished().path("usage");
    assertEquals(123, usage.path("fresh_input").asInt(), usage::toString);
    assertEquals(3, usage.path("output").asInt(), usage::toString);
    assertEquals(
        "subscription", r.named("session_started").get(0).path("auth").asText(), r::toString);
    FakeAnthropic.Received request = api.messages().get(0);
    assertEquals("Bearer " + token, request.headers().get("authorization"), request::toString);
    assertFalse(request.headers().containsKey("x-api-key"), request::toString);
    assertEquals(List.of("POST /v1/messages?beta=true"), api.allRequests());
  }

  /**
   * A subscription token made by {@code claude setup-token}, given as {@code
   * CLAUDE_CODE_OAUTH_TOKEN} in the driver config's {@code env}: also {@code auth: subscription}.
   * The doctor's login check does not see the driver's env; it says so instead of refusing.
   */
  @Test
  void aSubscriptionTokenInTheEnvironmentAnswersAsSubscription() throws Exception {
    api.then(
        req ->
            MessageStream.start("msg_sub_2", req.path("model").asText(), USAGE)
                .text("Token ok.")
                .end("end_turn", 3));
    Path capsule =
        TestCapsule.writeSubscription(
            tmp.resolve("capsule"),
            CLAUDE,
            api.baseUrl(),
            Map.of("CLAUDE_CODE_OAUTH_TOKEN", SavedLogins.CLAUDE_TOKEN));

    CapsuleRunProcess.Doctor d = CapsuleRunProcess.doctor(capsule, home, RUN_TIMEOUT);
    assertEquals(0, d.exit(), d.output());
    assertTrue(d.output().contains("ready: a run could start"), d.output());
    assertTrue(d.output().contains("no saved login, and none needed"), d.output());
    CapsuleRunProcess.Result r = run(capsule, "Say hello.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals("Token ok.", r.finished().path("result").asText(), r::toString);
    assertEquals(
        "subscription", r.named("session_started").get(0).path("auth").asText(), r::toString);
    assertEquals(
        "Bearer " + SavedLogins.CLAUDE_TOKEN, api.messages().get(0).headers().get("authorization"));
  }

  @Test
  void textOutsideAsciiSurvivesTheJsonLinesInAPosixLocale() throws Exception {
    String answer = "Gr\u00fc\u00dfe \u00b7 \u2713 \ud83d\ude80";
    api.then(
        req ->
            MessageStream.start("msg_utf8", req.path("model").asText(), USAGE)
                .text(answer)
                .end("end_turn", 5));
    CapsuleRunProcess.Result r = run(capsule(0, List.of()), "Greet in German.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals(answer, r.finished().path("result").asText(), r::toString);
  }

  @Test
  void aThinkingBlockIsStreamedAsThinkingBeforeTheAnswer() throws Exception {
    api.then(
        req ->
            MessageStream.start("msg_think_1", req.path("model").asText(), USAGE)
                .thinking("c2lnbmF0dXJl", "Let me ", "think.")
                .text("Thought about it.")
                .end("end_turn", 30));
    CapsuleRunProcess.Result r = run(capsule(10, List.of()), "Think, then answer.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals("Thought about it.", r.finished().path("result").asText(), r::toString);
    assertEquals(
        "Let me think.",
        r.named("thinking_delta").stream()
            .map(e -> e.path("delta").asText())
            .reduce("", String::concat),
        r::toString);
    assertEquals(30, r.finished().path("usage").path("output").asInt(), r::toString);
  }

  @Test
  void a401IsRetriedAsConfiguredThenFailsAsAnAuthFailure() throws Exception {
    api.otherwise(req -> Reply.unauthorized());
    CapsuleRunProcess.Result r = run(capsule(1, List.of()), "Say hello.");

    assertEquals(1, r.exit(), r::toString);
    JsonNode finished = r.finished();
    assertEquals("failed", finished.path("status").asText(), r::toString);
    assertEquals("E-RUN-033", finished.path("code").asText(), r::toString);
    assertEquals("E-RUN-033:auth", finished.path("failure_type").asText(), r::toString);
    // max_retries 1: the first attempt and one retry, each seen by the API and reported.
    assertEquals(2, api.messages().size(), api.allRequests()::toString);
    assertEquals(1, r.named("retry").size(), r::toString);
  }

  @Test
  void a429IsRetriedAfterItsRetryAfterAndThenTheRunIsDone() throws Exception {
    api.then(req -> Reply.rateLimited(1))
        .then(
            req ->
                MessageStream.start("msg_after_429", req.path("model").asText(), USAGE)
                    .text("Made it.")
                    .end("end_turn", 3));
    CapsuleRunProcess.Result r = run(capsule(2, List.of()), "Say hello.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals("Made it.", r.finished().path("result").asText(), r::toString);
    assertEquals(2, api.messages().size(), api.allRequests()::toString);
    assertFalse(r.named("retry").isEmpty(), r::toString);
  }

  @Test
  void ctrlCMidStreamCancelsTheRunAndLeavesNoHarnessProcess() throws Exception {
    Canceled c = ctrlCMidStream();

    assertEquals(1, c.result().exit(), c.result()::toString);
    // The outcome as the run recorded it (the --json line can be lost, see the next test).
    JsonNode end = traceRecord("run_end");
    assertEquals("failed", end.path("outcome").asText(), end::toString);
    assertEquals("E-RUN-040", end.path("code").asText(), end::toString);
    JsonNode exit = traceRecord("harness_exit");
    assertEquals("canceled", exit.path("cause").asText(), exit::toString);
    JsonNode interrupt = traceRecord("harness_interrupt");
    assertEquals("stdin-message", interrupt.path("method").asText(), interrupt::toString);
    assertTrue(interrupt.path("delivered").asBoolean(), interrupt::toString);
    for (ProcessHandle p : c.harness()) {
      p.onExit().get(10, TimeUnit.SECONDS);
      assertFalse(p.isAlive(), "claude " + p.pid() + " outlived the canceled run");
    }
    assertEquals(List.of(), processesWithHome(home), "processes left with the run's HOME");
  }

  @Test
  void ctrlCMidStreamStillPrintsTheCanceledOutcomeLine() throws Exception {
    Canceled c = ctrlCMidStream();

    assertEquals(1, c.result().exit(), c.result()::toString);
    JsonNode finished = c.result().finished();
    assertEquals("failed", finished.path("status").asText(), c.result()::toString);
    assertEquals("canceled", finished.path("failure_type").asText(), c.result()::toString);
  }

  /** A run whose answer stalls mid-stream, interrupted with SIGINT, as Ctrl-C does. */
  private Canceled ctrlCMidStream() throws Exception {
    api.then(
        req ->
            MessageStream.start("msg_stall", req.path("model").asText(), USAGE)
                .text("Starting a long answer")
                .stall());
    CapsuleRunProcess run =
        CapsuleRunProcess.start(capsule(0, List.of()), home, tmp.resolve("runs"), "Go on.");
    JsonNode delta =
        run.awaitEvent(e -> "text_delta".equals(e.path("event").asText()), RUN_TIMEOUT)
            .orElseThrow(
                () -> new AssertionError("no text_delta before the stall: " + run.events()));
    assertEquals("Starting a long answer", delta.path("delta").asText());
    List<ProcessHandle> harness =
        run.process().descendants().filter(RealClaudeIT::isClaude).toList();
    assertFalse(harness.isEmpty(), "the claude process should be running mid-stream");

    new ProcessBuilder("kill", "-INT", Long.toString(run.process().pid()))
        .inheritIO()
        .start()
        .waitFor();
    return new Canceled(run.finish(RUN_TIMEOUT), harness);
  }

  private record Canceled(CapsuleRunProcess.Result result, List<ProcessHandle> harness) {}

  /** The last record of this type in the (single) run's trace.jsonl. */
  private JsonNode traceRecord(String eventType) throws IOException {
    return Suite.traceRecord(tmp.resolve("runs"), eventType);
  }

  @Test
  void aToolCallGoesThroughTheBridgeAndItsResultReachesTheModel() throws Exception {
    api.then(
            req -> {
              String echo = bridgeTool(req, "echo");
              return MessageStream.start("msg_tool_1", req.path("model").asText(), USAGE)
                  .toolUse("toolu_fake_1", echo, "{\"args\": [\"hel", "lo-bridge\"]}")
                  .end("tool_use", 9);
            })
        .then(
            req ->
                MessageStream.start("msg_tool_2", req.path("model").asText(), USAGE)
                    .text("The tool said hello-bridge.")
                    .end("end_turn", 7));
    CapsuleRunProcess.Result r = run(capsule(0, List.of("echo")), "Use the echo tool.");

    assertEquals(0, r.exit(), r::toString);
    assertEquals("done", r.finished().path("status").asText(), r::toString);
    assertEquals(2, api.messages().size(), api.allRequests()::toString);
    JsonNode second = api.messages().get(1).body();
    JsonNode toolResult =
        StreamSupport.stream(second.path("messages").spliterator(), false)
            .flatMap(m -> StreamSupport.stream(m.path("content").spliterator(), false))
            .filter(c -> "tool_result".equals(c.path("type").asText()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no tool_result in " + second));
    assertEquals("toolu_fake_1", toolResult.path("tool_use_id").asText());
    assertTrue(
        toolResult.path("content").toString().contains("hello-bridge"), toolResult::toString);
    assertFalse(toolResult.path("is_error").asBoolean(false), toolResult::toString);
    assertEquals(1, r.named("tool_called").size(), r::toString);
    assertEquals(1, r.named("tool_resulted").size(), r::toString);
  }

  private Path capsule(int maxRetries, List<String> shellAllow) throws IOException {
    return TestCapsule.write(tmp.resolve("capsule"), CLAUDE, api.baseUrl(), maxRetries, shellAllow);
  }

  private CapsuleRunProcess.Result run(Path capsule, String task) throws Exception {
    return CapsuleRunProcess.start(capsule, home, tmp.resolve("runs"), task).finish(RUN_TIMEOUT);
  }

  /** The request's tool named {@code mcp__<server>__<bare>}; the server name is the runtime's. */
  static String bridgeTool(JsonNode request, String bare) {
    return StreamSupport.stream(request.path("tools").spliterator(), false)
        .map(t -> t.path("name").asText())
        .filter(n -> n.startsWith("mcp__") && n.endsWith("__" + bare))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no mcp__*__" + bare + " tool offered: " + request));
  }

  static boolean isClaude(ProcessHandle p) {
    return p.info()
        .command()
        .map(c -> c.endsWith("claude") || c.endsWith("claude.exe"))
        .orElse(false);
  }

  /** Live processes whose environment holds {@code HOME=<home>} (only this run's ever do). */
  private static List<Long> processesWithHome(Path home) {
    byte[] needle = ("HOME=" + home + "\0").getBytes(StandardCharsets.UTF_8);
    return ProcessHandle.allProcesses()
        .filter(ProcessHandle::isAlive)
        .filter(p -> p.pid() != ProcessHandle.current().pid())
        .filter(p -> environContains(p.pid(), needle))
        .map(ProcessHandle::pid)
        .toList();
  }

  private static boolean environContains(long pid, byte[] needle) {
    try {
      byte[] env = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
      String hay = "\0" + new String(env, StandardCharsets.UTF_8);
      return hay.contains("\0" + new String(needle, StandardCharsets.UTF_8));
    } catch (IOException | SecurityException gone) {
      return false;
    }
  }

  private static boolean isLoopback(NetworkInterface i) {
    try {
      return i.isLoopback() || !i.isUp();
    } catch (SocketException e) {
      return false;
    }
  }
}
