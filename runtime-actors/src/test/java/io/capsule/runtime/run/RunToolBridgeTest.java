package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestBuilder;
import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs of capsules with tools (issue 8 items 4 and 5): the bridge is started before launch and
 * named in the launch request, a real harness process calls a real tool through it over loopback
 * HTTP, the call is traced and reported as progress, a call in flight keeps the run alive past its
 * inactivity window, and the bridge is gone when the run has reported.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RunToolBridgeTest {

  private static final Duration MAX = Duration.ofSeconds(60);
  private static final Duration SHORT_WINDOW = Duration.ofSeconds(2);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicInteger IDS = new AtomicInteger();

  private ActorTestKit kit;
  private Path root;
  private EmbeddedRuntime runtime;
  private EmbeddedRuntime shortWindow;

  @BeforeAll
  void start(@TempDir Path workRoot) throws IOException {
    Assumptions.assumeTrue(
        Files.isExecutable(BridgeDriver.CURL), "the fake harness calls the bridge with curl");
    kit = ActorTestKit.create();
    root = workRoot; // deleted after the class, run directories and all
    runtime =
        EmbeddedRuntime.create(
            kit.system(), RunLimits.defaults(root), EmbeddedRuntime.noFolderDrivers());
    shortWindow =
        EmbeddedRuntime.create(
            kit.system(),
            RunLimits.defaults(root).withInactivityTimeout(SHORT_WINDOW),
            EmbeddedRuntime.noFolderDrivers());
  }

  @AfterAll
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  private record Ran(List<RunEvent> events, RunOutcome outcome, List<LaunchRequest> launches) {}

  private Ran run(
      EmbeddedRuntime rt, UnaryOperator<ManifestBuilder> manifest, List<String> call, String task)
      throws Exception {
    return run(rt, manifest, call, task, r -> r);
  }

  private Ran run(
      EmbeddedRuntime rt,
      UnaryOperator<ManifestBuilder> manifest,
      List<String> call,
      String task,
      UnaryOperator<RunRequest> request)
      throws Exception {
    String name = "bridge-" + IDS.incrementAndGet();
    ConcurrentLinkedQueue<LaunchRequest> launches = new ConcurrentLinkedQueue<>();
    Manifest m =
        manifest
            .apply(
                Manifest.builder(name, "0.1.0")
                    .builtinDriver("claude-code", "0.6.0")
                    .systemPrompt("You are a test.")
                    .envAllow("PATH"))
            .build();
    CapsuleRef ref =
        rt.register(name, m, () -> new BridgeDriver(call, launches))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    TestProbe<RunEvent> probe = kit.createTestProbe();
    rt.start(request.apply(RunRequest.of("task-" + name, ref, task)), probe.ref());
    List<RunEvent> events = RunFixture.events(probe, MAX);
    return new Ran(events, RunFixture.outcome(events), new ArrayList<>(launches));
  }

  @Test
  void aHarnessCallsEchoThroughTheBridgeTheCallIsTracedAndReportedAndTheBridgeIsGoneAfterwards()
      throws Exception {
    Ran r = run(runtime, b -> b.shellAllow("echo"), List.of("echo", "hello", "bridge"), "go");

    assertEquals(RunStatus.DONE, r.outcome().status(), r.outcome().toString());
    assertEquals("tool ok: hello bridge", r.outcome().result().orElseThrow());

    assertEquals(1, r.launches().size());
    Bridge bridge = r.launches().get(0).bridge().orElseThrow();
    assertEquals(List.of("echo"), bridge.toolNames());
    assertTrue(bridge.url().startsWith("http://127.0.0.1:"), bridge.url());
    assertEquals(64, bridge.bearerToken().length(), "a fresh 32-byte token, hex");

    List<RunEvent.BridgeCall> calls = RunFixture.only(r.events(), RunEvent.BridgeCall.class);
    assertEquals(
        List.of("running", "ok"), calls.stream().map(RunEvent.BridgeCall::status).toList());
    RunEvent.BridgeCall ended = calls.get(1);
    assertEquals("echo", ended.tool());
    assertEquals("tool", ended.kind());
    assertEquals(calls.get(0).callId(), ended.callId());
    assertEquals("hello bridge\n".length(), ended.outputBytes());

    List<JsonNode> toolCalls = trace(r.outcome().taskId(), "tool_call");
    assertEquals(1, toolCalls.size(), toolCalls.toString());
    JsonNode line = toolCalls.get(0);
    assertEquals("echo", line.path("name").asText());
    assertEquals("ok", line.path("status").asText());
    assertEquals("bridge", line.path("source").asText());
    assertEquals(ended.callId(), line.path("id").asText());
    assertTrue(line.path("input_bytes").asInt() > 0, line.toString());
    assertEquals(13, line.path("output_bytes").asInt(), line.toString());
    assertTrue(line.has("turn") && line.has("duration_ms"), line.toString());

    int port = URI.create(bridge.url()).getPort();
    assertThrows(
        ConnectException.class,
        () -> new Socket("127.0.0.1", port).close(),
        "the bridge stopped with the run");
  }

  @Test
  void theHubNarrowsTwoToolsToOneTheHarnessSeesOnlyThatOneAndCallingTheOtherIsRefused()
      throws Exception {
    Ran r =
        run(
            runtime,
            b -> b.shellAllow("echo", "cat"),
            List.of("cat", "/etc/hostname"),
            "go",
            q -> q.withAllowedTools(List.of("echo")));

    assertEquals(RunStatus.DONE, r.outcome().status(), r.outcome().toString());
    assertEquals(
        List.of("echo"), r.launches().get(0).bridge().orElseThrow().toolNames(), "launch request");
    assertEquals(List.of("tools/list: echo"), notes(r, "tools/list"), "what the harness sees");
    String said = r.outcome().result().orElseThrow();
    assertTrue(said.startsWith("tool error: ") && said.contains("E-TOOL-002"), said);
    List<RunEvent.BridgeCall> calls = RunFixture.only(r.events(), RunEvent.BridgeCall.class);
    assertEquals(1, calls.size(), calls.toString());
    assertEquals("cat", calls.get(0).tool());
    assertEquals("refused", calls.get(0).status());
    assertEquals("E-TOOL-002", calls.get(0).code().orElseThrow());
    assertEquals(List.of(), RunFixture.only(r.events(), RunEvent.Warning.class));
  }

  @Test
  void anAllowedToolTheCapsuleLacksIsIgnoredWithAWarningAndNeverOffered() throws Exception {
    Ran r =
        run(
            runtime,
            b -> b.shellAllow("echo"),
            List.of("echo", "hi"),
            "go",
            q -> q.withAllowedTools(List.of("no-such-tool-for-capsule-tests", "echo")));

    assertEquals(RunStatus.DONE, r.outcome().status(), r.outcome().toString());
    assertEquals("tool ok: hi", r.outcome().result().orElseThrow());
    assertEquals(List.of("echo"), r.launches().get(0).bridge().orElseThrow().toolNames());
    assertEquals(List.of("tools/list: echo"), notes(r, "tools/list"));
    List<RunEvent.Warning> warnings = RunFixture.only(r.events(), RunEvent.Warning.class);
    assertEquals(1, warnings.size(), warnings.toString());
    assertEquals("W-TOOL-010", warnings.get(0).code());
    assertTrue(
        warnings.get(0).message().contains("no-such-tool-for-capsule-tests"),
        warnings.get(0).message());
    JsonNode narrowing = trace(r.outcome().taskId(), "tool_narrowing").get(0);
    assertEquals("[\"echo\"]", narrowing.path("offered").toString(), narrowing.toString());
  }

  @Test
  void anEmptyAllowedListOffersNoToolAndStartsNoBridge() throws Exception {
    Ran r =
        run(
            runtime,
            b -> b.shellAllow("echo"),
            List.of("echo", "hi"),
            "go",
            q -> q.withAllowedTools(List.of()));

    assertEquals(RunStatus.DONE, r.outcome().status(), r.outcome().toString());
    assertEquals("no bridge", r.outcome().result().orElseThrow());
    assertTrue(r.launches().get(0).bridge().isEmpty(), "no tool, no bridge");
    assertEquals(List.of(), RunFixture.only(r.events(), RunEvent.BridgeCall.class));
  }

  @Test
  void withoutAllowedToolsEveryToolOfTheCapsuleIsOffered() throws Exception {
    Ran r = run(runtime, b -> b.shellAllow("echo", "cat"), List.of("echo", "all"), "go");

    assertEquals(RunStatus.DONE, r.outcome().status(), r.outcome().toString());
    assertEquals("tool ok: all", r.outcome().result().orElseThrow());
    assertEquals(List.of("echo", "cat"), r.launches().get(0).bridge().orElseThrow().toolNames());
    assertEquals(List.of("tools/list: echo,cat"), notes(r, "tools/list"));
    assertEquals(List.of(), trace(r.outcome().taskId(), "tool_narrowing"), "nothing narrowed");
  }

  @Test
  void aCapsuleWithoutToolsIsLaunchedWithNoBridge() throws Exception {
    Ran r = run(runtime, b -> b, List.of("-"), "go");

    assertEquals(RunStatus.DONE, r.outcome().status(), r.outcome().toString());
    assertEquals("no bridge", r.outcome().result().orElseThrow());
    assertEquals(1, r.launches().size());
    assertTrue(r.launches().get(0).bridge().isEmpty(), "no bridge without tools");
    assertEquals(List.of(), RunFixture.only(r.events(), RunEvent.BridgeCall.class));
  }

  @Test
  void aToolThatIsNotOnTheGrantedPathBlocksTheRunBeforeLaunch() throws Exception {
    Ran r =
        run(
            runtime,
            b -> b.shellAllow("echo", "no-such-tool-for-capsule-tests"),
            List.of("echo", "x"),
            "go");

    assertEquals(RunStatus.BLOCKED, r.outcome().status(), r.outcome().toString());
    assertEquals("E-TOOL-001", r.outcome().code().orElseThrow());
    assertTrue(r.outcome().message().contains("no-such-tool-for-capsule-tests"));
    assertEquals(List.of(), r.launches(), "nothing launched");
  }

  @Test
  @Order(Integer.MAX_VALUE) // after Pekko HTTP's first, slow, use in this JVM: see the window
  void aToolCallLongerThanTheInactivityWindowKeepsTheRunAlive() throws Exception {
    // A real HTTP exchange cannot be driven by ManualTime, so the window is short and real (2 s,
    // room for a loaded machine before the call): the harness prints nothing while its call runs
    // for more than three windows.
    Ran r = run(shortWindow, b -> b.shellAllow("sleep"), List.of("sleep", "7"), "go");

    assertEquals(RunStatus.DONE, r.outcome().status(), r.outcome().toString());
    assertEquals("tool ok: (no output)", r.outcome().result().orElseThrow());
    RunEvent.BridgeCall ended =
        RunFixture.only(r.events(), RunEvent.BridgeCall.class).stream()
            .filter(c -> c.status().equals("ok"))
            .findFirst()
            .orElseThrow();
    assertTrue(
        ended.durationMs() > 3 * SHORT_WINDOW.toMillis(),
        "the call outlasted the window several times: " + ended.durationMs() + " ms");
  }

  @Test
  void aCancelMidCallKillsTheToolAndTracesTheCallBeforeTheRunEnds() throws Exception {
    String name = "bridge-" + IDS.incrementAndGet();
    ConcurrentLinkedQueue<LaunchRequest> launches = new ConcurrentLinkedQueue<>();
    Manifest m =
        Manifest.builder(name, "0.1.0")
            .builtinDriver("claude-code", "0.6.0")
            .systemPrompt("You are a test.")
            .envAllow("PATH")
            .shellAllow("sleep")
            .build();
    CapsuleRef ref =
        runtime
            .register(name, m, () -> new BridgeDriver(List.of("sleep", "300"), launches))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    TestProbe<RunEvent> probe = kit.createTestProbe();
    var handle = runtime.start(RunRequest.of("task-" + name, ref, "go"), probe.ref());
    List<RunEvent> events = new ArrayList<>();
    RunEvent e;
    do {
      e = probe.receiveMessage(MAX);
      events.add(e);
    } while (!(e instanceof RunEvent.BridgeCall c && c.status().equals("running")));
    handle.cancel("enough");
    events.addAll(RunFixture.events(probe, MAX));

    RunOutcome o = RunFixture.outcome(events);
    assertEquals(RunStatus.FAILED, o.status(), o.toString());
    assertEquals("E-RUN-040", o.code().orElseThrow(), "canceled");
    List<RunEvent.BridgeCall> calls = RunFixture.only(events, RunEvent.BridgeCall.class);
    assertEquals(2, calls.size(), calls.toString());
    // Interrupted, the harness hangs up (abandoned), unless the run stopped the bridge first.
    assertTrue(List.of("abandoned", "stopped").contains(calls.get(1).status()), calls.toString());
    assertTrue(calls.get(1).durationMs() < 300_000);

    List<JsonNode> trace = trace(o.taskId(), null);
    List<String> types = trace.stream().map(n -> n.path("event_type").asText()).toList();
    assertTrue(
        types.indexOf("tool_call") >= 0 && types.indexOf("tool_call") < types.indexOf("run_end"),
        "the killed call is traced before the run's end: " + types);
    int port = URI.create(launches.peek().bridge().orElseThrow().url()).getPort();
    assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", port).close());
  }

  /** The harness's notes that start with {@code prefix}. */
  private static List<String> notes(Ran r, String prefix) {
    return RunFixture.only(r.events(), RunEvent.Note.class).stream()
        .map(RunEvent.Note::text)
        .filter(t -> t.startsWith(prefix))
        .toList();
  }

  /** The trace lines of one event type (all when null) from the run of {@code taskId}. */
  private List<JsonNode> trace(String taskId, String eventType) {
    try (Stream<Path> all = Files.walk(root)) {
      for (Path p : all.filter(f -> f.getFileName().toString().equals("trace.jsonl")).toList()) {
        List<JsonNode> lines = new ArrayList<>();
        for (String s : Files.readAllLines(p)) {
          lines.add(JSON.readTree(s));
        }
        boolean ours =
            lines.stream()
                .anyMatch(
                    n ->
                        n.path("event_type").asText().equals("run_start")
                            && n.path("task_id").asText().equals(taskId));
        if (ours) {
          return lines.stream()
              .filter(n -> eventType == null || n.path("event_type").asText().equals(eventType))
              .toList();
        }
      }
      throw new AssertionError("no trace for " + taskId);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
