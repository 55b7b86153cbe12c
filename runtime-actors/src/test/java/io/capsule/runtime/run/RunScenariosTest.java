package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunScenariosTest {

  private static final Duration MAX = Duration.ofSeconds(20);
  private ActorTestKit kit;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start(@TempDir Path workRoot) throws Exception {
    kit = ActorTestKit.create();
    root = workRoot; // deleted after the class, run directories and all
    fx = new RunFixture(kit, RunFixture.limits(root));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  private List<RunEvent> run(CapsuleRef ref, String task) {
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, task), probe.ref());
    return RunFixture.events(probe, MAX);
  }

  @Test
  void aHappyRunStreamsTextAndReportsDoneWithItsResultAndUsage() {
    CapsuleRef ref =
        fx.scenario(
            "{\"type\":\"session-started\",\"id\":\"h-1\",\"auth\":\"subscription\",\"model\":null}",
            "{\"type\":\"text-delta\",\"value\":\"Hel\"}",
            "{\"type\":\"text\",\"value\":\"Hello\"}",
            "{\"type\":\"usage\",\"input\":10,\"output\":5,\"cache-read\":2,\"cache-creation\":null,"
                + "\"thinking\":1}",
            "{\"type\":\"turn-end\",\"value\":\"the answer\"}");
    List<RunEvent> events = run(ref, "say hello");
    RunOutcome o = RunFixture.outcome(events);
    assertEquals(RunStatus.DONE, o.status(), o.toString());
    assertEquals("the answer", o.result().orElseThrow());
    assertEquals(1, o.turns());
    assertEquals(10, o.usage().freshInput());
    assertEquals(4, o.usage().output());
    assertEquals(1, o.usage().thinking());
    assertEquals(2, o.usage().cacheRead());
    assertEquals("h-1", o.sessionId().orElseThrow(), "the reported session id wins");
    assertTrue(
        RunFixture.only(events, RunEvent.Note.class).stream()
            .anyMatch(n -> n.text().equals("task: say hello")),
        "the task reached the harness on stdin");
    assertEquals(
        List.of("Hello"),
        RunFixture.only(events, RunEvent.TextCompleted.class).stream()
            .map(RunEvent.TextCompleted::text)
            .toList());
    fx.assertNoFilesDirLeft();
  }

  @Test
  void theTraceHasOneJsonObjectPerLineWithTheSpecsEventsAndNoArgumentValues() throws Exception {
    CapsuleRef ref =
        fx.scenario(
            "{\"type\":\"session-started\",\"id\":\"h-9\",\"auth\":\"subscription\","
                + "\"model\":null}",
            call("c1", "ls"),
            result("c1"),
            text("done"),
            end("r"));
    TestProbe<RunEvent> probe = kit.createTestProbe();
    io.capsule.runtime.RunRequest req = fx.request(ref, "trace me");
    fx.runtime.start(req, probe.ref());
    RunFixture.outcome(RunFixture.events(probe, MAX));
    Path dir;
    try (var dirs = Files.list(root)) {
      dir =
          dirs.filter(p -> p.getFileName().toString().startsWith(req.taskId() + "-"))
              .findFirst()
              .orElseThrow();
    }
    List<String> lines = Files.readAllLines(dir.resolve("trace.jsonl"));
    com.fasterxml.jackson.databind.ObjectMapper json =
        new com.fasterxml.jackson.databind.ObjectMapper();
    List<String> types = new java.util.ArrayList<>();
    for (String line : lines) {
      var node = json.readTree(line);
      assertTrue(node.has("timestamp"), line);
      types.add(node.get("event_type").asText());
      assertTrue(!line.contains("scenario-"), "argument values are never written: " + line);
    }
    for (String expected :
        List.of(
            "run_start",
            "harness_start",
            "harness_session",
            "tool_call",
            "inference",
            "harness_exit",
            "run_end")) {
      assertTrue(types.contains(expected), expected + " in " + types);
    }
    assertEquals("run_start", types.get(0));
    assertEquals("run_end", types.get(types.size() - 1));
  }

  private static String text(String t) {
    return "{\"type\":\"text\",\"value\":\"" + t + "\"}";
  }

  private static String call(String id, String name) {
    return "{\"type\":\"tool-call\",\"id\":\""
        + id
        + "\",\"name\":\""
        + name
        + "\",\"input\":\"{}\"}";
  }

  private static String result(String id) {
    return "{\"type\":\"tool-result\",\"id\":\"" + id + "\",\"output\":\"ok\",\"is-error\":false}";
  }

  private static String usage(long in, long out) {
    return "{\"type\":\"usage\",\"input\":"
        + in
        + ",\"output\":"
        + out
        + ",\"cache-read\":null,\"cache-creation\":null,\"thinking\":null}";
  }

  private static String end(String r) {
    return "{\"type\":\"turn-end\",\"value\":\"" + r + "\"}";
  }

  private static String failed(String kind) {
    return "{\"type\":\"turn-failed\",\"kind\":\"" + kind + "\",\"message\":\"boom\"}";
  }

  @Test
  void toolCallsOpenAndCloseTurnsAndUsageGrowthIsAttributedAcrossCumulativeReports() {
    CapsuleRef ref =
        fx.scenario(
            text("let me look"),
            call("c1", "ls"),
            usage(100, 10),
            result("c1"),
            call("c2", "cat"),
            usage(100, 10),
            usage(250, 30),
            result("c2"),
            text("done"),
            usage(300, 40),
            end("all done"));
    List<RunEvent> events = run(ref, "look around");
    RunOutcome o = RunFixture.outcome(events);
    assertEquals(RunStatus.DONE, o.status(), o.toString());
    assertEquals(3, o.turns());
    assertEquals(300, o.usage().freshInput(), "cumulative reports count once");
    assertEquals(40, o.usage().output());
    assertEquals(2, RunFixture.only(events, RunEvent.ToolResulted.class).size());
    assertEquals(
        List.of(1, 2),
        RunFixture.only(events, RunEvent.ToolCalled.class).stream()
            .map(RunEvent.ToolCalled::turn)
            .toList());
  }

  @Test
  void openingATurnPastMaxTurnsEndsTheRunAtOnceWithMaxTurns() throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    CapsuleRef ref =
        fx.scenario(
            List.of(
                "!pid " + pid,
                call("c1", "ls"),
                result("c1"),
                call("c2", "ls"),
                result("c2"),
                "!hang"),
            io.capsule.driver.api.InterruptMethod.SIGNAL_INT,
            false,
            b -> b.maxTurns(1));
    RunOutcome o = RunFixture.outcome(run(ref, "loop"));
    assertEquals(RunStatus.FAILED, o.status());
    assertEquals("E-RUN-033:max-turns", o.failureType().orElseThrow());
    assertEquals(1, o.turns());
    RunFixture.assertDead(pid);
  }

  @Test
  void aTurnClosingAtTheSpendCeilingEndsTheRun() throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    CapsuleRef ref =
        fx.scenario(
            List.of("!pid " + pid, call("c1", "ls"), usage(600, 400), result("c1"), "!hang"),
            io.capsule.driver.api.InterruptMethod.SIGNAL_INT,
            false,
            b -> b.maxSessionTokens(1000));
    RunOutcome o = RunFixture.outcome(run(ref, "spend"));
    assertEquals("E-RUN-040:spend-ceiling", o.failureType().orElseThrow());
    assertEquals(1000, o.usage().freshInput() + o.usage().output());
    RunFixture.assertDead(pid);
  }

  @Test
  void eventsAfterTheTerminalOneApplyOnlyQuotaSuggestedPromptAndNote() {
    CapsuleRef ref =
        fx.scenario(
            text("hi"),
            end("first"),
            text("late text"),
            usage(999, 999),
            "{\"type\":\"suggested-prompt\",\"value\":\"next?\"}",
            "{\"type\":\"note\",\"value\":\"late note\"}",
            end("second"));
    List<RunEvent> events = run(ref, "t");
    RunOutcome o = RunFixture.outcome(events);
    assertEquals("first", o.result().orElseThrow());
    assertEquals(0, o.usage().freshInput(), "late usage is ignored");
    assertEquals(1, RunFixture.only(events, RunEvent.TextCompleted.class).size());
    assertEquals(1, RunFixture.only(events, RunEvent.SuggestedPrompt.class).size());
    assertTrue(
        RunFixture.only(events, RunEvent.Note.class).stream()
            .anyMatch(n -> n.text().equals("late note")));
  }

  @Test
  void endOfOutputWithoutATerminalEventAsksTheDriverToClassifyTheExit() {
    CapsuleRef ref = fx.scenario(text("partial"), "!exit 3");
    RunOutcome o = RunFixture.outcome(run(ref, "t"));
    assertEquals(RunStatus.FAILED, o.status());
    assertEquals("E-RUN-033:harness-error", o.failureType().orElseThrow());
    CapsuleRef clean = fx.scenario(text("partial"), "!exit 0");
    assertEquals(RunStatus.DONE, RunFixture.outcome(run(clean, "t")).status());
  }

  @Test
  void aDriverThatTrapsMidParseEndsTheRunWithERun034AndLeavesNoProcess() throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    int closedBefore = PlayDriver.CLOSED.get();
    CapsuleRef ref = fx.scenario("!pid " + pid, text("ok"), "TRAP", "!hang");
    RunOutcome o = RunFixture.outcome(run(ref, "t"));
    assertEquals("E-RUN-034", o.code().orElseThrow());
    assertTrue(o.message().contains("parse"), o.message());
    RunFixture.assertDead(pid);
    fx.assertNoFilesDirLeft();
    assertTrue(PlayDriver.CLOSED.get() > closedBefore, "the driver instance was closed");
  }

  @Test
  void aThreadedCapsuleResumesItsSessionAndAGoneSessionIsERun036() {
    CapsuleRef ref =
        fx.scenario(
            List.of(failed("harness-error")),
            io.capsule.driver.api.InterruptMethod.SIGNAL_INT,
            false,
            RunFixture.threaded());
    PlayDriver.LAUNCHES.clear();
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "first").withConversation("conv-1"), probe.ref());
    RunOutcome first = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals("E-RUN-033:harness-error", first.failureType().orElseThrow());
    fx.runtime.start(fx.request(ref, "second").withConversation("conv-1"), probe.ref());
    RunOutcome second = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals("E-RUN-036:harness-error", second.failureType().orElseThrow());
    List<io.capsule.driver.api.LaunchRequest> launches = List.copyOf(PlayDriver.LAUNCHES);
    assertEquals(2, launches.size());
    assertEquals(io.capsule.driver.api.SessionMode.NEW, launches.get(0).session().mode());
    assertEquals(io.capsule.driver.api.SessionMode.RESUME, launches.get(1).session().mode());
    assertEquals(launches.get(0).session().id(), launches.get(1).session().id());
  }
}
