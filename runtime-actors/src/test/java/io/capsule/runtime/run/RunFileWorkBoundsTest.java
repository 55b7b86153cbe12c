package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.VersionProber;
import io.capsule.runtime.harness.HarnessLimits;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run's file work (applying the launch plan, the clean-up before the report) is bounded, under
 * {@link ManualTime}: the blocking dispatcher has one thread, and the driver's launch leaves a task
 * that holds it, so everything after the launch queues behind it, as on a machine whose disk or
 * pool is stuck. Before the bounds the run waited for ever, and never reported.
 */
class RunFileWorkBoundsTest {

  private static final Duration MAX = Duration.ofSeconds(30);
  private static final String TURN_END = "{\"type\":\"turn-end\",\"value\":\"r\"}";
  private static final String STUCK = "stuck-dispatcher";

  private final ActorTestKit kit =
      ActorTestKit.create(
          ManualTime.config()
              .withFallback(
                  ConfigFactory.parseString(
                      STUCK
                          + " { type = Dispatcher, executor = thread-pool-executor,"
                          + " thread-pool-executor { fixed-pool-size = 1 }, throughput = 1 }"))
              .withFallback(ConfigFactory.load()));
  private final ManualTime time = ManualTime.get(kit.system());
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    release.countDown();
    kit.shutdownTestKit();
  }

  @Test
  void aStuckPlanApplyAndCleanUpEachEndAtTheirBoundAndTheRunStillReports(@TempDir Path root)
      throws Exception {
    RunLimits d = RunFixture.limits(root);
    RunLimits limits =
        new RunLimits(
            d.versionProbeTimeout(),
            d.driverCallTimeout(),
            d.inactivityTimeout(),
            d.terminalGrace(),
            d.interruptGrace(),
            root,
            STUCK,
            d.harness());
    RunFixture fx =
        new RunFixture(
            kit,
            limits,
            EmbeddedRuntime.create(kit.system(), limits, EmbeddedRuntime.noFolderDrivers()));
    Executor pool = kit.system().dispatchers().lookup(DispatcherSelector.fromConfig(STUCK));
    CountDownLatch held = new CountDownLatch(1);
    CapsuleRef ref =
        fx.scenario(
            List.of(TURN_END),
            InterruptMethod.SIGNAL_INT,
            false,
            b -> b,
            play -> new HoldingPool(play, pool, held, release));
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());

    assertTrue(held.await(MAX.toSeconds(), TimeUnit.SECONDS), "the launch ran");
    // Real time for the launch's answer to reach the run, which then starts the apply's bound.
    List<RunEvent> seen = drain(probe);
    time.timePasses(RunFaults.APPLY_BOUND.minusMillis(1));
    seen.addAll(drain(probe));
    assertTrue(
        seen.stream().noneMatch(e -> e instanceof RunEvent.Finished), "ended early: " + seen);
    time.timePasses(Duration.ofMillis(1));
    seen.addAll(until(probe, e -> isPhase(e, RunPhase.FINISHED)));

    // The clean-up queues behind the held thread too: no report until its bound.
    time.timePasses(RunClosing.CLEANUP_BOUND.minusMillis(1));
    probe.expectNoMessage(Duration.ofMillis(300));
    time.timePasses(Duration.ofMillis(1));
    seen.addAll(RunFixture.events(probe, MAX));

    RunOutcome o = RunFixture.outcome(seen);
    assertEquals(RunStatus.FAILED, o.status(), o::toString);
    assertEquals("E-RUN-007", o.code().orElseThrow(), o::toString);
    assertTrue(o.message().contains("not applied within 30 s"), o.message());
    assertTrue(o.message().contains("W-RUN-045"), o.message());
    assertTrue(
        RunFixture.only(seen, RunEvent.Warning.class).stream()
            .anyMatch(w -> w.code().equals("W-RUN-045")),
        "the late clean-up is a warning: " + seen);

    // The plan comes back after the run gave up on it: its files directory is removed then.
    release.countDown();
    probe.awaitAssert(
        MAX,
        () -> {
          fx.assertNoFilesDirLeft();
          return null;
        });
  }

  @Test
  void aHarnessWhoseSpawnNeverReturnsIsGivenUpAtTheKillsBoundAndTheRunReports(@TempDir Path root)
      throws Exception {
    // Only the harness's io dispatcher is stuck: its spawn queues behind a held thread, so the
    // harness never exits, however it is killed. Before the bound a cancel then waited for ever.
    RunLimits d = RunFixture.limits(root);
    HarnessLimits h = d.harness();
    RunLimits limits =
        new RunLimits(
            d.versionProbeTimeout(),
            d.driverCallTimeout(),
            d.inactivityTimeout(),
            d.terminalGrace(),
            d.interruptGrace(),
            root,
            d.blockingDispatcher(),
            h.withIoDispatcher(STUCK));
    VersionProber answers =
        (binary, args, env, workdir) -> CompletableFuture.completedFuture(Optional.of("1.0.0"));
    EmbeddedRuntime runtime =
        EmbeddedRuntime.create(
            kit.system(), limits, EmbeddedRuntime.noFolderDrivers(), Optional.of(answers));
    RunFixture fx = new RunFixture(kit, limits, runtime);
    Executor pool = kit.system().dispatchers().lookup(DispatcherSelector.fromConfig(STUCK));
    CountDownLatch held = new CountDownLatch(1);
    pool.execute(
        () -> {
          held.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertTrue(held.await(MAX.toSeconds(), TimeUnit.SECONDS), "the io pool is held");
    Path marker = root.resolve("harness-pid");
    CapsuleRef ref = fx.scenario("!pid " + marker, "!hang");
    TestProbe<RunEvent> probe = kit.createTestProbe();
    RunHandle handle = runtime.start(fx.request(ref, "t"), probe.ref());
    List<RunEvent> seen = until(probe, e -> isPhase(e, RunPhase.RUNNING));

    handle.cancel(); // the interrupt cannot be delivered (nothing spawned yet): the group is killed
    seen.addAll(until(probe, e -> isPhase(e, RunPhase.INTERRUPTING)));
    seen.addAll(drain(probe));
    time.timePasses(RunFaults.KILL_BOUND.minusMillis(1));
    seen.addAll(drain(probe));
    assertTrue(
        seen.stream().noneMatch(e -> e instanceof RunEvent.Finished), "ended early: " + seen);
    time.timePasses(Duration.ofMillis(1));
    seen.addAll(RunFixture.events(probe, MAX));

    RunOutcome o = RunFixture.outcome(seen);
    assertEquals(RunStatus.FAILED, o.status(), o::toString);
    assertEquals("canceled", o.failureType().orElseThrow(), o::toString);
    assertTrue(o.message().contains("W-RUN-046"), o.message());
    assertTrue(
        RunFixture.only(seen, RunEvent.Warning.class).stream()
            .anyMatch(w -> w.code().equals("W-RUN-046")),
        "the abandoned harness is a warning: " + seen);

    // The spawn comes back once the pool is free: the harness is killed then, and nothing is left.
    release.countDown();
    probe.awaitAssert(
        MAX,
        () -> {
          assertEquals(
              List.of(),
              ProcessHandle.current()
                  .descendants()
                  .filter(p -> p.info().commandLine().orElse("").contains("play.sh"))
                  .map(ProcessHandle::pid)
                  .toList());
          fx.assertNoFilesDirLeft();
          return null;
        });
  }

  private static boolean isPhase(RunEvent e, RunPhase phase) {
    return e instanceof RunEvent.StateChanged s && s.phase() == phase;
  }

  private static List<RunEvent> until(
      TestProbe<RunEvent> probe, java.util.function.Predicate<RunEvent> p) {
    List<RunEvent> seen = new ArrayList<>();
    while (true) {
      RunEvent e = probe.receiveMessage(MAX);
      seen.add(e);
      if (p.test(e)) {
        return seen;
      }
    }
  }

  /** Whatever arrives within a short real-time window. */
  private static List<RunEvent> drain(TestProbe<RunEvent> probe) {
    List<RunEvent> got = new ArrayList<>();
    while (true) {
      try {
        got.add(probe.receiveMessage(Duration.ofMillis(300)));
      } catch (AssertionError timeout) {
        return got;
      }
    }
  }

  /**
   * {@link PlayDriver} whose launch leaves a task on the one-thread pool that holds it until the
   * test releases it: the plan's application and the clean-up queue behind it.
   */
  private record HoldingPool(
      ProcessDriver inner, Executor pool, CountDownLatch held, CountDownLatch release)
      implements ForwardingDriver {

    @Override
    public LaunchResult launch(LaunchRequest request) {
      pool.execute(
          () -> {
            held.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      return inner.launch(request);
    }
  }
}
