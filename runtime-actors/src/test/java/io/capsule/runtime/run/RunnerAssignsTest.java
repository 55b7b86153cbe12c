package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.RunnerClient;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.driver.DriverLoading;
import io.capsule.runtime.hub.AssignReader;
import io.capsule.runtime.hub.HubLink;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real hub and a real runner (HubLink over the runner client) on loopback: assignments a hub may
 * send that this runner cannot use are each reported as that task's failure, and the runner still
 * runs the next good task. A NUL in a capsule name stopped the runner's task handler before.
 */
class RunnerAssignsTest {

  private static final String PROJECT = "p";
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);

  private final ActorTestKit kit = ActorTestKit.create();
  private final BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
  private HubServer hub;

  @AfterEach
  void stop() throws Exception {
    if (hub != null) {
      hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
  }

  @Test
  void hostileAssignsAreFailedTasksAndTheNextTaskRuns(@TempDir Path root) throws Exception {
    Path capsules = Files.createDirectories(root.resolve("capsules"));
    Path hello = Files.createDirectories(capsules.resolve("hello"));
    Files.writeString(hello.resolve("murmur.yaml"), MANIFEST);
    Path scenario =
        Files.writeString(root.resolve("scenario.txt"), "!read-task\n" + TURN_END + "\n");
    DriverLoading loading =
        m -> new DriverLoading.Loaded(play(scenario).describe(), () -> play(scenario));
    EmbeddedRuntime runtime =
        EmbeddedRuntime.create(
            kit.system(),
            RunLimits.defaults(Files.createDirectories(root.resolve("runs"))),
            loading);

    ProtocolConfig config = ProtocolConfig.defaults();
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(5));
    hub =
        HubServer.create(kit.system(), config, tokens)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    hub.events().runWith(Sink.foreach(events::add), kit.system());
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                hub.url(),
                PROJECT,
                "0.1.0-test",
                TokenSource.fixed(tokens.issue(PROJECT, Optional.empty(), Duration.ofMinutes(5))),
                config));
    // A reader with a bug for one task: whatever fails while handling a task is that task's.
    AssignReader reader =
        new AssignReader(capsules) {
          @Override
          public Reading read(io.capsule.protocol.frame.TaskAssign assign) {
            if (assign.task().id().equals("t-boom")) {
              throw new IllegalStateException("a bug met while reading this task");
            }
            return super.read(assign);
          }
        };
    kit.spawn(HubLink.create(client, runtime.guardian(), reader, 2));
    await(e -> e instanceof HubEvent.RunnerUp);
    RunnerKey runner = new RunnerKey(PROJECT, RunnerKey.DEFAULT_RUNNER);

    String[][] hostile = {
      {"nul", "capsule:hel\u0000lo"},
      {"newline", "capsule:hello\nworld"},
      {"parent", "capsule:../hello"},
      {"long", "capsule:" + "a".repeat(10_240)},
    };
    for (String[] h : hostile) {
      assign(runner, "t-" + h[0], Invocation.builder(h[1]));
      TaskReportBody r = report("t-" + h[0]);
      assertEquals("blocked", r.status(), h[0]);
      assertEquals("E-RUN-041", r.failureType().orElseThrow(), h[0]);
    }
    assign(runner, "t-model", Invocation.builder("capsule:hello").model("m\u0000"));
    assertEquals("E-RUN-041", report("t-model").failureType().orElseThrow());

    // Wrong-typed fields fail the runner's schema check; the client used to drop such a frame
    // (E-PRO-004 in its log) and the task stayed assigned forever.
    ObjectNode spec = TaskSpec.builder("t-budget", "chore", "Say hi").build().json();
    spec.putObject("budget").put("iterations", "many");
    hub.assign(runner, TaskSpec.wrap(spec), "worker", Invocation.builder("capsule:hello").build())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    TaskReportBody budget = report("t-budget");
    assertEquals("blocked", budget.status());
    assertEquals("E-RUN-041", budget.failureType().orElseThrow());
    assertTrue(budget.json().toString().contains("iterations"), budget.json().toString());
    ObjectNode inv = Invocation.builder("capsule:hello").build().json();
    inv.putObject("budget").put("max_turns", "ten");
    hub.assign(
            runner,
            TaskSpec.builder("t-turns", "chore", "Say hi").build(),
            "worker",
            Invocation.wrap(inv))
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    assertEquals("E-RUN-041", report("t-turns").failureType().orElseThrow());

    assign(runner, "t-boom", Invocation.builder("capsule:hello"));
    TaskReportBody boom = report("t-boom");
    assertEquals("failed", boom.status());
    assertEquals("E-RUN-042", boom.failureType().orElseThrow());

    assign(runner, "t-good", Invocation.builder("capsule:hello"));
    TaskReportBody good = report("t-good");
    assertEquals("done", good.status(), "the runner still runs tasks: " + good);
  }

  private void assign(RunnerKey runner, String id, Invocation.Builder invocation) throws Exception {
    hub.assign(
            runner, TaskSpec.builder(id, "chore", "Say hi").build(), "worker", invocation.build())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
  }

  private TaskReportBody report(String taskId) throws InterruptedException {
    HubEvent e =
        await(x -> x instanceof HubEvent.Report r && r.report().report().taskId().equals(taskId));
    return ((HubEvent.Report) e).report().report();
  }

  private HubEvent await(java.util.function.Predicate<HubEvent> match) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      HubEvent e = events.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      assertNotNull(e, "no matching hub event within 30 s");
      if (match.test(e)) {
        return e;
      }
    }
  }

  private static PlayDriver play(Path scenario) {
    return new PlayDriver(RunFixture.script(), scenario, InterruptMethod.SIGNAL_INT, false);
  }

  static final String TURN_END = "{\"type\":\"turn-end\",\"value\":\"hi\"}";

  static final String MANIFEST =
      """
      name: hello
      version: 0.1.0
      description: A capsule played by a script.
      artifacts:
        - name: jsonl
          version: 0.6.0
          runtime: driver
          builtin: jsonl
      inference:
        transport: process
        driver:
          artifact: jsonl
          config: {}
        system_prompt: |
          You are a test.
      capabilities:
        env:
          allow: [PATH]
      lifecycle:
        conversation: stateless
      """;
}
