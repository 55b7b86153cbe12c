package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.VersionProber;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.driver.DriverRegistry;
import io.capsule.runtime.driver.ResolvedCapsule;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RunPreparation} alone under {@link ManualTime}, with probes as the registry, the runtime
 * and the parent: a registry that never answers is bounded ({@code E-RUN-043}), a refusal is the
 * run's, and nothing is reported twice.
 */
class RunPreparationTest {

  private final ActorTestKit kit =
      ActorTestKit.create(ManualTime.config().withFallback(ConfigFactory.load()));
  private final ManualTime time = ManualTime.get(kit.system());
  private final TestProbe<DriverRegistry.Command> registry = kit.createTestProbe();
  private final TestProbe<CapsuleRuntime.Command> runtime = kit.createTestProbe();
  private final TestProbe<RunPreparation.Report> parent = kit.createTestProbe();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private DriverRegistry.Resolve start(Path root) {
    return start(root, (binary, args, env, dir) -> new CompletableFuture<>());
  }

  private DriverRegistry.Resolve start(Path root, VersionProber prober) {
    RunLimits limits = RunFixture.limits(root);
    RunServices services =
        new RunServices(registry.ref(), limits, prober, Clock.systemUTC(), Map.of());
    kit.spawn(
        RunPreparation.create(
            RunRequest.of("t", new CapsuleRef.Registered("absent"), "task"),
            services,
            runtime.ref(),
            root,
            parent.ref()));
    return registry.expectMessageClass(DriverRegistry.Resolve.class);
  }

  @Test
  void aRegistryThatNeverAnswersIsRefusedAtTwiceTheDriverCallDeadline(@TempDir Path root) {
    start(root);
    Duration bound = RunFixture.limits(root).driverCallTimeout().multipliedBy(2);

    time.timePasses(bound.minusMillis(1));
    parent.expectNoMessage(Duration.ofMillis(200));
    time.timePasses(Duration.ofMillis(1));

    RunPreparation.Refused r = parent.expectMessageClass(RunPreparation.Refused.class);
    Ending.Blocked b = assertInstanceOf(Ending.Blocked.class, r.ending());
    assertEquals(Code.E_RUN_043, b.diagnostic().code());
    time.timePasses(bound);
    parent.expectNoMessage(Duration.ofMillis(200));
  }

  @Test
  void aRefusalOfTheRegistryIsTheRunsAndItsBoundNeverFires(@TempDir Path root) {
    DriverRegistry.Resolve resolve = start(root);
    Diagnostic no = Diagnostic.of(Code.E_RUN_006, "no such capsule");

    resolve.replyTo().tell(new DriverRegistry.Refused(no));

    RunPreparation.Refused r = parent.expectMessageClass(RunPreparation.Refused.class);
    assertEquals(new Ending.Blocked(no), r.ending());
    time.timePasses(Duration.ofMinutes(5));
    parent.expectNoMessage(Duration.ofMillis(200));
    runtime.expectNoMessage(Duration.ofMillis(50));
  }

  @Test
  void theVersionProbeRunsWhileTheSessionIsPlannedAndReadyIsStillToldFirst(@TempDir Path root) {
    TestProbe<String> probes = kit.createTestProbe();
    CompletableFuture<Optional<String>> answer = new CompletableFuture<>();
    DriverRegistry.Resolve resolve =
        start(
            root,
            (binary, args, env, dir) -> {
              probes.getRef().tell("probed " + binary);
              return answer;
            });
    PlayDriver play =
        new PlayDriver(
            RunFixture.script(), root.resolve("scenario"), InterruptMethod.SIGNAL_INT, false);
    ResolvedCapsule capsule =
        new ResolvedCapsule(
            Manifest.builder("c", "0.1.0").builtinDriver("claude-code", "0.6.0").build(),
            "play",
            play.describe(),
            () -> play,
            Path.of("/bin/sh"),
            List.of());

    resolve.replyTo().tell(new DriverRegistry.Ready(capsule));
    CapsuleRuntime.PlanSession plan = runtime.expectMessageClass(CapsuleRuntime.PlanSession.class);
    // Before, the probe waited for the plan's answer.
    probes.expectMessage("probed /bin/sh");
    answer.complete(Optional.of("play v1.0"));
    parent.expectNoMessage(Duration.ofMillis(200));

    Session session = new Session("s-1", SessionMode.NEW);
    plan.replyTo().tell(session);
    assertEquals(new RunPreparation.Ready(capsule, session), parent.receiveMessage());
    assertEquals(new RunPreparation.Versioned(Optional.of("play v1.0")), parent.receiveMessage());
    time.timePasses(RunFixture.limits(root).versionProbeTimeout());
    parent.expectNoMessage(Duration.ofMillis(200));
    probes.expectNoMessage(Duration.ofMillis(50));
  }
}
