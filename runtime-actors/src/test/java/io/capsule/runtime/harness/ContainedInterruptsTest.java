package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.ContainedFixture.assertNoSleepers;
import static io.capsule.runtime.harness.ContainedFixture.launch;
import static io.capsule.runtime.harness.ContainedFixture.limits;
import static io.capsule.runtime.harness.ContainedFixture.lines;
import static io.capsule.runtime.harness.ContainedFixture.marker;
import static io.capsule.runtime.harness.ContainedFixture.of;
import static io.capsule.runtime.harness.ContainedFixture.sleepers;
import static io.capsule.runtime.harness.ContainedFixture.untilEnd;
import static io.capsule.runtime.harness.HarnessFixture.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both interrupt methods reach a harness in the sandbox (real bubblewrap and socat), so a cancel
 * stays graceful; and what the harness left behind dies with it.
 */
@ExtendWith(TestKitJUnit5Extension.class)
class ContainedInterruptsTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;

  private ActorRef<HarnessProcess.Command> spawn(
      AppliedLaunch launch, TestProbe<HarnessProcess.Event> probe) {
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
    probe.expectMessageClass(HarnessProcess.ContainmentDecided.class, WAIT);
    probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT);
    HarnessFixture.readUntil(probe, harness, "ready");
    return harness;
  }

  private static void assertEndedByItself(List<HarnessProcess.Event> events, int code) {
    HarnessProcess.Exited exit = of(events, HarnessProcess.Exited.class).get(0);
    assertEquals(Optional.of(code), exit.code(), "the harness's own exit, not a kill: " + exit);
    assertFalse(exit.killedByRuntime());
    assertEquals(
        List.of(true),
        of(events, HarnessProcess.InterruptResult.class).stream()
            .map(HarnessProcess.InterruptResult::delivered)
            .toList());
  }

  @Test
  void sigintReachesTheContainedHarnessSoTheCancelStaysGraceful() throws IOException {
    AppliedLaunch launch = launch(runDir, HarnessGrants.NONE, "obey-sigint.sh");
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness = spawn(launch, probe);
    harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    List<HarnessProcess.Event> events = untilEnd(probe, harness);
    assertEquals(List.of("got-sigint"), lines(events));
    assertEndedByItself(events, 7);
    HarnessFixture.assertClosedAndGone(launch);
  }

  @Test
  void stdinMessagesReachTheContainedHarness() throws IOException {
    AppliedLaunch launch = launch(runDir, HarnessGrants.NONE, "read-then-answer.sh");
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness = spawn(launch, probe);
    harness.tell(
        new HarnessProcess.Interrupt(
            InterruptMethod.STDIN_MESSAGE, Optional.of("stop\n".getBytes(StandardCharsets.UTF_8))));
    List<HarnessProcess.Event> events = untilEnd(probe, harness);
    assertEquals(List.of("got stop"), lines(events));
    assertEndedByItself(events, 0);
    HarnessFixture.assertClosedAndGone(launch);
  }

  /**
   * A setsid child (another session: no group signal reaches it) and a double-forked one (an
   * asynchronous child of a non-interactive shell: SIGINT ignored) outlive a graceful cancel of an
   * uncontained harness; in the sandbox they end with its PID namespace.
   */
  @Test
  void aCanceledHarnesssSetsidAndDoubleForkedChildrenDieWithIt() throws IOException {
    String marker = marker();
    AppliedLaunch launch =
        launch(runDir, HarnessGrants.NONE, "leave-children-obey-sigint.sh", marker);
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness = spawn(launch, probe);
    probe.awaitAssert(
        WAIT,
        () -> {
          assertEquals(2, sleepers(marker), "both children run before the cancel");
          return null;
        });
    harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    List<HarnessProcess.Event> events = untilEnd(probe, harness);
    assertEquals(List.of("got-sigint"), lines(events));
    assertEndedByItself(events, 7);
    assertNoSleepers(probe, marker);
    HarnessFixture.assertClosedAndGone(launch);
  }
}
