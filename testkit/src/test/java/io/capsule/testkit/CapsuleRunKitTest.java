package io.capsule.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.manifest.Manifest;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** Worked examples: whole runs with fake harnesses, timers moved by hand. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CapsuleRunKitTest {
  private ActorTestKit kit;
  private CapsuleRunKit runs;
  private Path dir;

  @BeforeAll
  void start(@TempDir Path tmp) {
    kit = ActorTestKit.create(CapsuleRunKit.manualTimeConfig());
    dir = tmp; // deleted after the class, the kit's run directories and all
    runs = CapsuleRunKit.create(kit, dir.resolve("runs"));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  private CapsuleRef capsule(String name, HarnessScript script) throws IOException {
    Path harness = script.writeShellScript(dir.resolve(name + ".sh"));
    ScriptedDriver.Builder driver =
        ScriptedDriver.builder(name, harness.toString())
            .plan(ScriptedDriver.Builder.plan(List.of()));
    Manifest manifest =
        Manifest.builder(name, "0.1.0")
            .builtinDriver(name, "0.1.0")
            .command(harness.toString())
            .envAllow("PATH")
            .build();
    return runs.register(name, manifest, driver::build);
  }

  @Test
  void aHarnessThatAnswersEndsTheRunDone() throws IOException {
    CapsuleRef ref =
        capsule(
            "answers",
            HarnessScript.builder()
                .out("{\"type\":\"text\",\"value\":\"Hello\"}")
                .out("{\"type\":\"turn-end\",\"value\":\"Hello\"}")
                .exit(0)
                .build());
    RunOutcome outcome = runs.start(ref, "hi").awaitOutcome();
    assertEquals(RunStatus.DONE, outcome.status(), outcome.message());
    assertEquals(Optional.of("Hello"), outcome.result());
  }

  @Test
  void aSilentHarnessIsKilledOnlyWhenManualTimePassesTheInactivityWindow() throws IOException {
    CapsuleRef ref =
        capsule(
            "silent",
            HarnessScript.builder()
                .out("{\"type\":\"text\",\"value\":\"thinking\"}")
                .linger(Duration.ofSeconds(120))
                .build());
    CapsuleRunKit.Run run = runs.start(ref, "wait");
    run.awaitEvent(e -> e instanceof RunEvent.TextCompleted);
    // Real time passes, manual time does not: the window has not run out.
    run.expectNoEvent(Duration.ofMillis(500));
    runs.time().timePasses(runs.limits().inactivityTimeout().plusSeconds(1));
    RunOutcome outcome = run.awaitOutcome();
    assertEquals(RunStatus.FAILED, outcome.status());
    assertEquals(Optional.of("E-RUN-035"), outcome.code());
  }
}
