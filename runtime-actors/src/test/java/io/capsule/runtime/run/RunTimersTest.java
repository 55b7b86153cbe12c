package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run's timers under {@link ManualTime}: nothing fires until the test moves time. The harness
 * is a real process, so the test waits (in real time) for the events that show each timer has
 * started, then moves manual time past it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunTimersTest {

  private static final Duration MAX = Duration.ofSeconds(30);
  private static final String WORKING = "{\"type\":\"text\",\"value\":\"working\"}";
  private ActorTestKit kit;
  private ManualTime time;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start(@TempDir Path workRoot) throws Exception {
    kit = ActorTestKit.create(ManualTime.config().withFallback(ConfigFactory.load()));
    time = ManualTime.get(kit.system());
    root = workRoot; // deleted after the class, run directories and all
    fx = new RunFixture(kit, RunFixture.limits(root));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  /** Receives events until one matches; returns them all. */
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

  private static boolean working(RunEvent e) {
    return e instanceof RunEvent.TextCompleted t && t.text().equals("working");
  }

  @Test
  void aHarnessSilentPastTheInactivityWindowIsKilledWithERun035() throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    CapsuleRef ref = fx.scenario("!pid " + pid, WORKING, "!hang");
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());
    until(probe, RunTimersTest::working);
    time.timePasses(Duration.ofSeconds(599));
    probe.expectNoMessage(Duration.ofMillis(300));
    time.timePasses(Duration.ofSeconds(1));
    RunOutcome o = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals("E-RUN-035", o.code().orElseThrow());
    RunFixture.assertDead(pid);
    fx.assertNoFilesDirLeft();
  }

  @Test
  void aHarnessThatIgnoresSigintIsKilledAtTheEndOfTheAbsoluteInterruptGrace() throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    CapsuleRef ref =
        fx.scenario(
            List.of("!pid " + pid, "!ignore-int", WORKING, "!hang"),
            InterruptMethod.SIGNAL_INT,
            false,
            b -> b);
    TestProbe<RunEvent> probe = kit.createTestProbe();
    RunHandle h = fx.runtime.start(fx.request(ref, "t"), probe.ref());
    until(probe, RunTimersTest::working);
    h.cancel();
    until(probe, e -> e instanceof RunEvent.Note n && n.text().startsWith("interrupt delivered"));
    time.timePasses(Duration.ofSeconds(9));
    probe.expectNoMessage(Duration.ofMillis(300));
    assertTrue(
        ProcessHandle.of(Long.parseLong(Files.readString(pid).trim()))
            .map(ProcessHandle::isAlive)
            .orElse(false),
        "still alive inside the grace");
    time.timePasses(Duration.ofSeconds(1));
    RunOutcome o = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals("canceled", o.failureType().orElseThrow());
    RunFixture.assertDead(pid);
  }

  @Test
  void aHarnessThatLingersAfterItsResultIsKilledAfterTheTerminalGraceAndTheRunIsDone()
      throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    CapsuleRef ref =
        fx.scenario(
            "!pid " + pid, "!ignore-int", "{\"type\":\"turn-end\",\"value\":\"r\"}", "!hang");
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());
    until(
        probe,
        e ->
            e instanceof RunEvent.StateChanged s
                && s.phase() == io.capsule.runtime.javadsl.RunPhase.RUNNING);
    // The grace starts when the result is parsed; move time in steps until the run reports.
    List<RunEvent> events = new ArrayList<>();
    int steps = 0;
    while (steps < 40 && events.stream().noneMatch(e -> e instanceof RunEvent.Finished)) {
      time.timePasses(Duration.ofMillis(500));
      steps++;
      events.addAll(drain(probe));
    }
    assertTrue(steps >= 6, "not killed before the 3 s terminal grace: " + steps + " steps");
    RunOutcome o = RunFixture.outcome(events);
    assertEquals("r", o.result().orElseThrow());
    RunFixture.assertDead(pid);
    probe.expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void aDriverCallPastItsDeadlineEndsTheRunWithERun034AndKillsTheHarness() throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    CapsuleRef ref =
        fx.scenario(
            List.of("!pid " + pid, WORKING, "!hang"),
            InterruptMethod.SIGNAL_INT,
            false,
            b -> b,
            d -> new StuckInParse(d, entered, release));
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());
    try {
      assertTrue(entered.await(30, java.util.concurrent.TimeUnit.SECONDS), "parse was called");
      List<RunEvent> events = new ArrayList<>(drain(probe));
      time.timePasses(Duration.ofSeconds(29));
      events.addAll(drain(probe));
      assertTrue(events.stream().noneMatch(e -> e instanceof RunEvent.Finished), "not yet");
      time.timePasses(Duration.ofSeconds(1));
      events.addAll(RunFixture.events(probe, MAX));
      RunOutcome o = RunFixture.outcome(events);
      assertEquals("E-RUN-034", o.code().orElseThrow());
      assertTrue(o.message().contains("overran"), o.message());
      RunFixture.assertDead(pid);
    } finally {
      release.countDown();
    }
  }

  /** A driver whose parse blocks until released (a hung driver call). */
  private static final class StuckInParse implements io.capsule.driver.api.ProcessDriver {
    private final PlayDriver inner;
    private final java.util.concurrent.CountDownLatch entered;
    private final java.util.concurrent.CountDownLatch release;

    StuckInParse(
        PlayDriver inner,
        java.util.concurrent.CountDownLatch entered,
        java.util.concurrent.CountDownLatch release) {
      this.inner = inner;
      this.entered = entered;
      this.release = release;
    }

    @Override
    public io.capsule.driver.api.Description describe() {
      return inner.describe();
    }

    @Override
    public io.capsule.driver.api.LaunchResult launch(io.capsule.driver.api.LaunchRequest r) {
      return inner.launch(r);
    }

    @Override
    public List<io.capsule.driver.api.Event> parse(List<String> lines) {
      entered.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return List.of();
    }

    @Override
    public io.capsule.driver.api.Event classifyExit(io.capsule.driver.api.ExitStatus exit) {
      return inner.classifyExit(exit);
    }

    @Override
    public io.capsule.driver.api.LoginState readLogin(io.capsule.driver.api.LoginOutput output) {
      return inner.readLogin(output);
    }
  }
}
