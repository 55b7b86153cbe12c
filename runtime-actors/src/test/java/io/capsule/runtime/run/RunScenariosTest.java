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

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunScenariosTest {

  private static final Duration MAX = Duration.ofSeconds(20);
  private ActorTestKit kit;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start() throws Exception {
    kit = ActorTestKit.create();
    root = Files.createTempDirectory("capsule-runs-");
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
            "!read-task",
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
}
