package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run's starting and ending phases under {@link ManualTime} (the running phase's timers are in
 * {@link RunTimersTest}): a version probe that never answers is bounded, and once the outcome is
 * final a cancel changes nothing.
 */
class RunStartingTimersTest {

  private static final Duration MAX = Duration.ofSeconds(30);
  private static final String TURN_END = "{\"type\":\"turn-end\",\"value\":\"r\"}";

  private final ActorTestKit kit =
      ActorTestKit.create(ManualTime.config().withFallback(ConfigFactory.load()));
  private final ManualTime time = ManualTime.get(kit.system());

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aVersionProbeThatNeverAnswersIsGivenUpAfterItsBoundAndTheRunGoesOn(@TempDir Path root) {
    RunLimits limits = RunFixture.limits(root);
    // A prober whose answer never comes: only the run's own bound can move it on.
    EmbeddedRuntime runtime =
        EmbeddedRuntime.create(
            kit.system(),
            limits,
            EmbeddedRuntime.noFolderDrivers(),
            Optional.of((binary, args, env, dir) -> new CompletableFuture<>()));
    RunFixture fx = new RunFixture(kit, limits, runtime);
    CapsuleRef ref = fx.scenario(TURN_END);
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());

    probe.fishForMessage(
        MAX,
        e ->
            e instanceof RunEvent.StateChanged s && s.phase() == RunPhase.STARTING
                ? FishingOutcomes.complete()
                : FishingOutcomes.continueAndIgnore());
    time.timePasses(limits.versionProbeTimeout().minusMillis(1));
    probe.expectNoMessage(Duration.ofMillis(300));
    time.timePasses(Duration.ofMillis(1));

    List<RunEvent> events = RunFixture.events(probe, MAX);
    RunOutcome o = RunFixture.outcome(events);
    assertEquals(RunStatus.DONE, o.status());
    assertTrue(
        RunFixture.only(events, RunEvent.Warning.class).stream()
            .anyMatch(w -> w.code().equals("W-RUN-002")),
        "an unreadable version is a warning");
  }

  @Test
  void aCancelAfterTheOutcomeChangesNothing(@TempDir Path root) {
    RunFixture fx = new RunFixture(kit, RunFixture.limits(root));
    CapsuleRef ref = fx.scenario(TURN_END);
    TestProbe<RunEvent> probe = kit.createTestProbe();
    var request = fx.request(ref, "t");
    var handle = fx.runtime.start(request, probe.ref());
    // The version probe is a real process here; its bound must not fire: give it time in real
    // time only.
    RunOutcome o = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals(RunStatus.DONE, o.status());

    handle.cancel("too late");
    time.timePasses(Duration.ofSeconds(60));
    probe.expectNoMessage(Duration.ofMillis(300));
  }
}
