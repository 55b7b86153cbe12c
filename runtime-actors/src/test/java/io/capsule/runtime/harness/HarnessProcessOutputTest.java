package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.HarnessFixture.WAIT;
import static io.capsule.runtime.harness.HarnessFixture.assertClosedAndGone;
import static io.capsule.runtime.harness.HarnessFixture.assertGroupGone;
import static io.capsule.runtime.harness.HarnessFixture.collect;
import static io.capsule.runtime.harness.HarnessFixture.collectAfterSpawn;
import static io.capsule.runtime.harness.HarnessFixture.limits;
import static io.capsule.runtime.harness.HarnessFixture.shLaunch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What a real harness writes reaches the listener as docs/run-semantics.md §5 says. */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HarnessProcessOutputTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;

  private ActorRef<HarnessProcess.Command> start(
      AppliedLaunch launch, TestProbe<HarnessProcess.Event> probe) {
    return testKit.spawn(HarnessProcess.create(launch, probe.getRef(), limits()));
  }

  @Test
  void readsLinesTheStderrTailAndTheExitCode() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "lines-then-exit.sh");
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(List.of("one", "two", ""), out.lines());
    assertEquals(Optional.of(3), out.exit().code());
    assertEquals(Optional.empty(), out.exit().signal());
    assertEquals("something went wrong\n", out.exit().stderrTail());
    assertFalse(out.exit().killedByRuntime());
    assertGroupGone(probe, out.pgid());
    assertClosedAndGone(launch);
    probe.expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void theEndOfStdoutFollowsTheLastLinesBeforeTheyAreAcknowledgedAndTheActorStopsAfterThem()
      throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "lines-then-exit.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT);

    // Nothing acknowledged: before, the end of stdout waited for every batch's acknowledgement.
    List<String> lines = new ArrayList<>();
    int batches = 0;
    boolean ended = false;
    boolean exited = false;
    while (!ended || !exited) {
      HarnessProcess.Event event = probe.receiveMessage(WAIT);
      if (event instanceof HarnessProcess.Lines l) {
        assertFalse(ended, "lines after the end of stdout");
        lines.addAll(l.lines());
        batches++;
      } else if (event instanceof HarnessProcess.StdoutEnded) {
        ended = true;
      } else if (event instanceof HarnessProcess.Exited e) {
        assertEquals(Optional.of(3), e.code());
        exited = true;
      } else {
        throw new AssertionError("unexpected " + event);
      }
    }
    assertEquals(List.of("one", "two", ""), lines, "every line came before the end");

    // The actor waits for the acknowledgements it owes its pump, then stops.
    TestProbe<String> stops = testKit.createTestProbe();
    testKit.spawn(
        Behaviors.<String>setup(
            ctx -> {
              ctx.watchWith(harness, "stopped");
              return Behaviors.receiveMessage(
                  m -> {
                    stops.getRef().tell(m);
                    return Behaviors.same();
                  });
            }));
    stops.expectNoMessage(Duration.ofMillis(300));
    for (int i = 0; i < batches; i++) {
      harness.tell(new HarnessProcess.BatchHandled());
    }
    stops.expectMessage(WAIT, "stopped");
    probe.expectNoMessage(Duration.ofMillis(100));
    assertClosedAndGone(launch);
  }

  @Test
  void theEnvironmentIsExactlyTheAppliedOneAndNothingIsInherited() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch =
        HarnessFixture.launch(runDir, Path.of("/usr/bin/env"), List.of(), new byte[0], false);
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(Set.of("PATH=/usr/bin:/bin", "HOME=/nonexistent"), Set.copyOf(out.lines()));
    assertEquals(2, out.lines().size());
    assertClosedAndGone(launch);
  }

  @Test
  void theHarnessRunsInTheRunsWorkdir() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch =
        HarnessFixture.launch(runDir, Path.of("/bin/pwd"), List.of("-P"), new byte[0], false);
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(List.of(runDir.toRealPath().toString()), out.lines());
    assertClosedAndGone(launch);
  }

  @ParameterizedTest(name = "{0} in flight")
  @ValueSource(ints = {1, 2, 3})
  void aFloodHoldsAfterTheBatchesInFlightAndThenFlowsCompletelyInOrder(int inFlight)
      throws IOException {
    int count = 200_000;
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "numbered.sh", String.valueOf(count));
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits().withBatchesInFlight(inFlight)));
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();

    List<String> lines = new ArrayList<>();
    for (int i = 0; i < inFlight; i++) {
      HarnessProcess.Lines batch = probe.expectMessageClass(HarnessProcess.Lines.class, WAIT);
      assertTrue(batch.lines().size() <= 256, "batch of " + batch.lines().size());
      lines.addAll(batch.lines());
    }
    // None acknowledged: nothing more comes, and the harness is blocked on its pipe, still alive.
    probe.expectNoMessage(Duration.ofMillis(500));
    assertFalse(ProcessGroup.liveMembers(pgid).isEmpty(), "the flooding harness ended early");

    // One acknowledged: exactly one more batch.
    harness.tell(new HarnessProcess.BatchHandled());
    lines.addAll(probe.expectMessageClass(HarnessProcess.Lines.class, WAIT).lines());
    probe.expectNoMessage(Duration.ofMillis(300));

    for (int i = 0; i < inFlight; i++) {
      harness.tell(new HarnessProcess.BatchHandled());
    }
    HarnessFixture.Collected rest = collectAfterSpawn(probe, harness, pgid);
    lines.addAll(rest.lines());
    assertEquals(count + 1, lines.size());
    for (int i = 0; i < count; i++) {
      if (!lines.get(i).equals(String.valueOf(i + 1))) {
        assertEquals(String.valueOf(i + 1), lines.get(i), "line " + (i + 1) + " out of order");
      }
    }
    assertEquals("numbered-done", lines.get(count));
    assertTrue(rest.batches() < count, "lines were batched");
    assertEquals(Optional.of(0), rest.exit().code());
    assertGroupGone(probe, pgid);
    assertClosedAndGone(launch);
  }

  @Test
  void aTwentyMebibyteLineIsCutAtTheCapWithANote() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "long-line.sh", String.valueOf(20 * 1024 * 1024));
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(2, out.lines().size());
    assertEquals(8 * 1024 * 1024, out.lines().get(0).length());
    assertEquals("after", out.lines().get(1));
    assertEquals(1, out.cutNotes().size());
    assertTrue(out.cutNotes().get(0).contains("20971520"), out.cutNotes().get(0));
    assertClosedAndGone(launch);
  }

  @Test
  void binaryGarbageBecomesReplacementCharacters() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "garbage.sh");
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(List.of("\uFFFD\uFFFDok\uFFFD"), out.lines());
    assertClosedAndGone(launch);
  }

  @Test
  void theStderrTailIsTheLastBytesTrimmedToWholeLines() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "stderr-flood.sh");
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    String tail = out.exit().stderrTail();
    assertTrue(tail.length() <= 4096, "tail of " + tail.length());
    assertTrue(tail.length() > 3000, "tail of " + tail.length());
    assertTrue(tail.startsWith("stderr line "), tail.substring(0, 40));
    assertTrue(tail.contains("stderr line 1999\n"));
    assertTrue(tail.endsWith("no newline at the end"));
    assertEquals(Optional.of(1), out.exit().code());
    assertClosedAndGone(launch);
  }

  @Test
  void stdoutClosedWhileTheHarnessRunsEndsTheLinesButNotTheProcess() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "close-stdout.sh");
    ActorRef<HarnessProcess.Command> harness = start(launch, probe);
    long pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
    assertEquals(
        List.of("before-close"),
        probe.expectMessageClass(HarnessProcess.Lines.class, WAIT).lines());
    harness.tell(new HarnessProcess.BatchHandled());
    probe.expectMessageClass(HarnessProcess.StdoutEnded.class, WAIT);
    probe.expectNoMessage(Duration.ofMillis(300));
    assertFalse(ProcessGroup.liveMembers(pgid).isEmpty());

    harness.tell(new HarnessProcess.Kill("test"));
    HarnessProcess.Exited exit = probe.expectMessageClass(HarnessProcess.Exited.class, WAIT);
    assertEquals(Optional.of(9), exit.signal());
    assertTrue(exit.killedByRuntime());
    assertGroupGone(probe, pgid);
    probe.expectTerminated(harness, WAIT);
    assertClosedAndGone(launch);
  }

  @Test
  void aHarnessThatExits145UnsignalledReportsCode145() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "exit-145.sh");
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(List.of("denied"), out.lines());
    assertEquals(Optional.of(145), out.exit().code());
    assertEquals(Optional.empty(), out.exit().signal());
    assertFalse(out.exit().killedByRuntime());
    assertGroupGone(probe, out.pgid());
    assertClosedAndGone(launch);
  }

  /**
   * A signal the runtime did not send cannot be told from an exit code (the JDK reports both as
   * 128+N), so a self-inflicted SIGKILL reads as code 137 (see {@code ExitCode}).
   */
  @Test
  void aCrashMidOutputReportsItsStatusAsACodeAndDropsThePartialLine() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "crash.sh");
    HarnessFixture.Collected out = collect(probe, start(launch, probe));
    assertEquals(List.of("a", "b"), out.lines());
    assertEquals(Optional.of(137), out.exit().code());
    assertEquals(Optional.empty(), out.exit().signal());
    assertFalse(out.exit().killedByRuntime());
    assertGroupGone(probe, out.pgid());
    assertClosedAndGone(launch);
  }

  @Test
  void anOrphanHoldingStderrDelaysTheExitReportOnlyUpToTheDrainBound() throws IOException {
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    AppliedLaunch launch = shLaunch(runDir, "orphan-holding-stderr.sh");
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(
                launch, probe.getRef(), limits().withStderrDrainTimeout(Duration.ofMillis(300))));
    HarnessFixture.Collected out = collect(probe, harness);
    assertEquals(Optional.of(4), out.exit().code());
    assertEquals("last words\n", out.exit().stderrTail());
    probe.expectTerminated(harness, WAIT);
    assertGroupGone(probe, out.pgid());
    assertClosedAndGone(launch);
  }
}
