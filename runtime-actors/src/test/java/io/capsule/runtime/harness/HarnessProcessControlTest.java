package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.HarnessFixture.WAIT;
import static io.capsule.runtime.harness.HarnessFixture.assertClosedAndGone;
import static io.capsule.runtime.harness.HarnessFixture.assertGroupGone;
import static io.capsule.runtime.harness.HarnessFixture.collect;
import static io.capsule.runtime.harness.HarnessFixture.collectAfterSpawn;
import static io.capsule.runtime.harness.HarnessFixture.limits;
import static io.capsule.runtime.harness.HarnessFixture.readUntil;
import static io.capsule.runtime.harness.HarnessFixture.shLaunch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.InterruptMethod;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * stdin, interrupts, kills and cleanup with real harness processes (docs/run-semantics.md §4, §9).
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HarnessProcessControlTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;

  private ActorRef<HarnessProcess.Command> start(
      AppliedLaunch launch, TestProbe<HarnessProcess.Event> probe) {
    return testKit.spawn(HarnessProcess.create(launch, probe.getRef(), limits()));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void stdinBytesAreWrittenAndStdinIsClosed() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "echo-stdin.sh", utf8("x\ny\n"), false);
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(List.of("x", "y"), out.lines());
    assertEquals(Optional.of(0), out.exit().code());
    assertClosedAndGone(launch);
  }

  @Test
  void aHarnessThatExitsBeforeReadingStdinIsAStdinFailure() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    // More than a pipe holds, so the write cannot finish before the harness is gone.
    byte[] stdin = new byte[4 * 1024 * 1024];
    AppliedLaunch launch = shLaunch(runDir, "exit-without-reading.sh", stdin, false);
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    HarnessFixture.Collected out = collect(probe, harness);
    assertEquals(1, out.stdinFailures().size());
    assertEquals(Code.E_RUN_007, out.stdinFailures().get(0).code());
    assertEquals(Optional.of(0), out.exit().code());
    long pgid = out.pgid();
    probe.expectTerminated(harness, WAIT);
    assertGroupGone(probe, pgid);
    assertClosedAndGone(launch);
  }

  @Test
  void aStdinMessageInterruptIsWrittenToTheOpenStdin() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "read-then-answer.sh", new byte[0], true);
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
    readUntil(probe, harness, "ready");
    harness.tell(
        new HarnessProcess.Interrupt(InterruptMethod.STDIN_MESSAGE, Optional.of(utf8("stop\n"))));
    HarnessFixture.Collected out = collectAfterSpawn(probe, harness, pgid);
    assertEquals(List.of(true), out.interrupts());
    assertEquals(List.of("got stop"), out.lines());
    assertEquals(Optional.of(0), out.exit().code());
    assertClosedAndGone(launch);
  }

  @Test
  void aStdinMessageInterruptAfterStdinWasClosedIsNotDelivered() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "ignore-sigint.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
    readUntil(probe, harness, "ready");
    harness.tell(
        new HarnessProcess.Interrupt(InterruptMethod.STDIN_MESSAGE, Optional.of(utf8("x\n"))));
    assertFalse(probe.expectMessageClass(HarnessProcess.InterruptResult.class, WAIT).delivered());
    harness.tell(new HarnessProcess.Interrupt(InterruptMethod.UNSUPPORTED, Optional.empty()));
    assertFalse(probe.expectMessageClass(HarnessProcess.InterruptResult.class, WAIT).delivered());
    harness.tell(new HarnessProcess.Kill("test"));
    collectAfterSpawn(probe, harness, pgid);
    assertGroupGone(probe, pgid);
    assertClosedAndGone(launch);
  }

  @Test
  void sigintReachesTheProcessGroup() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "obey-sigint.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
    readUntil(probe, harness, "ready");
    harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    HarnessFixture.Collected out = collectAfterSpawn(probe, harness, pgid);
    assertEquals(List.of(true), out.interrupts());
    assertEquals(List.of("got-sigint"), out.lines());
    assertEquals(Optional.of(7), out.exit().code());
    assertFalse(out.exit().killedByRuntime());
    assertGroupGone(probe, pgid);
    assertClosedAndGone(launch);
  }

  @Test
  void aHarnessEndedByTheRuntimesSigintReportsTheSignal() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "die-on-sigint.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
    readUntil(probe, harness, "ready");
    harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    HarnessFixture.Collected out = collectAfterSpawn(probe, harness, pgid);
    assertEquals(List.of(true), out.interrupts());
    assertEquals(Optional.empty(), out.exit().code());
    assertEquals(Optional.of(2), out.exit().signal());
    assertFalse(out.exit().killedByRuntime());
    assertGroupGone(probe, pgid);
    assertClosedAndGone(launch);
  }

  @Test
  void aHarnessThatIgnoresSigintIsKilledByKill() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "ignore-sigint.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
    readUntil(probe, harness, "ready");
    harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    assertTrue(probe.expectMessageClass(HarnessProcess.InterruptResult.class, WAIT).delivered());
    probe.expectNoMessage(Duration.ofMillis(500));
    assertFalse(ProcessGroup.liveMembers(pgid).isEmpty(), "it should have ignored SIGINT");

    harness.tell(new HarnessProcess.Kill("interrupt grace over"));
    harness.tell(new HarnessProcess.Kill("again"));
    HarnessFixture.Collected out = collectAfterSpawn(probe, harness, pgid);
    assertEquals(Optional.of(9), out.exit().signal());
    assertTrue(out.exit().killedByRuntime());
    probe.expectTerminated(harness, WAIT);
    assertGroupGone(probe, pgid);
    probe.expectNoMessage(Duration.ofMillis(100));
    assertClosedAndGone(launch);
  }

  /**
   * When the leader exits, the JDK takes what the stdout pipe holds and closes it unless a read is
   * in progress, so StdoutEnded may come before or only after the kill; the orphans die either way.
   */
  @Test
  void childrenThatOutliveTheParentAreKilledWithTheGroup() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "orphans-holding-stdout.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
    HarnessProcess.Exited exit = null;
    boolean ready = false;
    boolean ended = false;
    while (exit == null || !ready || !ended) {
      HarnessProcess.Event event = probe.receiveMessage(WAIT);
      if (event instanceof HarnessProcess.Lines l) {
        ready |= l.lines().contains("ready");
        harness.tell(new HarnessProcess.BatchHandled());
      } else if (event instanceof HarnessProcess.Exited e) {
        exit = e;
        harness.tell(new HarnessProcess.Kill("terminal grace over"));
      } else if (event instanceof HarnessProcess.StdoutEnded) {
        ended = true;
      } else {
        throw new AssertionError("unexpected " + event);
      }
    }
    assertEquals(Optional.of(0), exit.code());
    probe.expectTerminated(harness, WAIT);
    assertGroupGone(probe, pgid);
    assertClosedAndGone(launch);
  }

  @Test
  void detachedOrphansDieWhenTheActorStopsAfterTheExit() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "orphans-detached.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    HarnessFixture.Collected out = collect(probe, harness);
    assertEquals(List.of("ready"), out.lines());
    probe.expectTerminated(harness, WAIT);
    assertGroupGone(probe, out.pgid());
    assertClosedAndGone(launch);
  }

  @Test
  void stoppingTheActorKillsTheWholeGroup() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "children-running.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    HarnessProcess.Spawned spawned = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT);
    readUntil(probe, harness, "ready");
    assertEquals(spawned.pid(), spawned.pgid());
    assertEquals(
        OptionalLong.of(spawned.pid()),
        ProcessGroup.liveGroupOf(Path.of("/proc", String.valueOf(spawned.pid()))));
    assertEquals(3, ProcessGroup.liveMembers(spawned.pgid()).size());

    testKit.stop(harness, WAIT);
    assertGroupGone(probe, spawned.pgid());
    assertClosedAndGone(launch);
  }

  @Test
  void aBinaryThatCannotRunIsASpawnFailure() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    Path notExecutable = Files.writeString(runDir.resolve("harness.txt"), "not a program");
    AppliedLaunch launch =
        HarnessFixture.launch(runDir, notExecutable, List.of(), new byte[0], false);
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    HarnessProcess.SpawnFailed failed =
        probe.expectMessageClass(HarnessProcess.SpawnFailed.class, WAIT);
    assertEquals(Code.E_RUN_007, failed.diagnostic().code());
    probe.expectTerminated(harness, WAIT);
    assertClosedAndGone(launch);
  }

  @Test
  void aKillSentBeforeTheSpawnCompletesKillsTheHarnessAsSoonAsItRuns() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "children-running.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    harness.tell(new HarnessProcess.Kill("canceled at once"));
    HarnessFixture.Collected out = collect(probe, harness);
    assertTrue(out.exit().killedByRuntime());
    assertEquals(Optional.of(9), out.exit().signal());
    probe.expectTerminated(harness, WAIT);
    assertGroupGone(probe, out.pgid());
    assertClosedAndGone(launch);
  }
}
