package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** A run whose actor fails still reports once, and the runtime and other runs go on. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunIsolationTest {

  private static final Duration MAX = Duration.ofSeconds(20);
  private ActorTestKit kit;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start(@TempDir Path workRoot) throws Exception {
    kit = ActorTestKit.create();
    root = workRoot; // deleted after the class, run directories and all
    // A prober that throws on the run's own thread for a workdir named "crash": the run fails.
    EmbeddedRuntime rt =
        EmbeddedRuntime.create(
            kit.system(),
            RunFixture.limits(root),
            EmbeddedRuntime.noFolderDrivers(),
            Optional.of(
                (binary, args, env, workdir) -> {
                  if (workdir.getFileName().toString().equals("crash")) {
                    throw new IllegalStateException("a bug in the run");
                  }
                  return CompletableFuture.completedFuture(Optional.of("play 1.0"));
                }));
    fx = new RunFixture(kit, RunFixture.limits(root), rt);
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aRunThatFailsReportsOnceAndTheRuntimeKeepsRunningOthers() throws Exception {
    CapsuleRef ref = fx.scenario("{\"type\":\"turn-end\",\"value\":\"r\"}");
    Path crash = Files.createDirectories(root.resolve("crash"));
    TestProbe<RunEvent> probe = kit.createTestProbe();
    RunRequest bad = fx.request(ref, "t").withWorkdir(crash.toString());
    fx.runtime.start(bad, probe.ref());
    RunOutcome failed = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals(RunStatus.FAILED, failed.status());
    assertEquals("E-RUN-040", failed.code().orElseThrow());
    assertEquals(bad.taskId(), failed.taskId());

    fx.runtime.start(fx.request(ref, "t"), probe.ref());
    RunOutcome fine = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals(RunStatus.DONE, fine.status(), fine.toString());
  }
}
