package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.manifest.Access;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestBuilder;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A contained run's bridged tool runs in the run's sandbox, not on the host (docs/containment.md):
 * the run hands the harness's sandbox to its bridge, and the call sees what the harness sees.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunContainedToolTest {

  private static final Duration MAX = Duration.ofSeconds(60);

  private ActorTestKit kit;
  private EmbeddedRuntime runtime;

  @BeforeAll
  void start(@TempDir Path workRoot) {
    Assumptions.assumeTrue(
        Files.isExecutable(BridgeDriver.CURL), "the fake harness calls the bridge with curl");
    kit = ActorTestKit.create();
    RunLimits limits = RunLimits.defaults(workRoot);
    runtime =
        EmbeddedRuntime.create(
            kit.system(),
            limits.withHarness(
                limits
                    .harness()
                    .withContainment(ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED))),
            EmbeddedRuntime.noFolderDrivers());
  }

  @AfterAll
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  /** A capsule granting {@code sh}, whose harness calls {@code sh -c script} through the bridge. */
  private CapsuleRef capsule(String name, String script, UnaryOperator<ManifestBuilder> more)
      throws Exception {
    Manifest m =
        more.apply(
                Manifest.builder(name, "0.1.0")
                    .builtinDriver("claude-code", "0.6.0")
                    .systemPrompt("You are a test.")
                    .envAllow("PATH")
                    .shellAllow("sh")
                    // the test harness lives in the test classes, hidden like the rest of the host
                    .harnessPath(BridgeDriver.script().getParent().toString(), Access.READ))
            .build();
    ConcurrentLinkedQueue<LaunchRequest> launches = new ConcurrentLinkedQueue<>();
    return runtime
        .register(name, m, () -> new BridgeDriver(List.of("sh", "-c", script), launches))
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  private TestProbe<RunEvent> start(String task, CapsuleRef ref) {
    TestProbe<RunEvent> events = kit.createTestProbe();
    runtime.start(RunRequest.of(task, ref, "go"), events.ref());
    return events;
  }

  @Test
  void aContainedRunsToolRunsInItsSandboxAsNobodyWithoutTheHost() throws Exception {
    String probe =
        "echo uid=$(id -u),var=$(test -e /var && echo visible || echo absent),"
            + "caps=$(sed -n s/^CapEff:.//p /proc/self/status | tr -d [:space:])";
    CapsuleRef ref = capsule("contained-tool", probe, b -> b);
    RunOutcome outcome =
        RunFixture.outcome(RunFixture.events(start("task-contained-tool", ref), MAX));

    assertEquals(RunStatus.DONE, outcome.status(), outcome.toString());
    assertEquals("tool ok: uid=0,var=absent,caps=0000000000000000", outcome.result().orElseThrow());
  }

  /**
   * A fork bomb in one run's tool is held by that run's process limit and ends that run with {@code
   * E-RUN-048}; a run beside it finishes, and so does one started after it: the runner keeps
   * serving.
   */
  @Test
  void aForkBombInOneRunsToolEndsThatRunAndTheRunnerServesTheOthers() throws Exception {
    Assumptions.assumeTrue(
        System.getenv("CI") != null || "root".equals(System.getProperty("user.name")),
        "cgroups are written as root");
    CapsuleRef bomb = capsule("fork-bomb", "while :; do sleep 300 & done", b -> b.processLimit(48));
    CapsuleRef fine = capsule("fine", "echo fine", b -> b);
    TestProbe<RunEvent> bombEvents = start("task-fork-bomb", bomb);
    TestProbe<RunEvent> besideEvents = start("task-beside", fine);

    RunOutcome beside = RunFixture.outcome(RunFixture.events(besideEvents, MAX));
    RunOutcome bombed = RunFixture.outcome(RunFixture.events(bombEvents, MAX));
    RunOutcome after = RunFixture.outcome(RunFixture.events(start("task-after", fine), MAX));

    assertEquals(RunStatus.FAILED, bombed.status(), bombed.toString());
    assertEquals("E-RUN-048", bombed.code().orElseThrow(), bombed.toString());
    assertEquals(RunStatus.DONE, beside.status(), beside.toString());
    assertEquals("tool ok: fine", beside.result().orElseThrow());
    assertEquals(RunStatus.DONE, after.status(), after.toString());
  }
}
