package io.capsule.runtime.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The run entity's phases with its node's services as probes (no cluster): slot, start, events,
 * passivation after the outcome, hand-off of a leaving node, and a cancel before any start.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunEntityTest {

  private static final Duration HAND_OFF = Duration.ofSeconds(15);
  private static final Duration LINGER = Duration.ofSeconds(60);

  private final ActorTestKit kit = ActorTestKit.create(ManualTime.config());
  private final ManualTime time = ManualTime.get(kit.system());

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  /** One entity with probes for everything around it. */
  private final class Rig {
    final TestProbe<ClusterSharding.ShardCommand> shard = kit.createTestProbe();
    final TestProbe<CapsuleRuntime.Command> runtime = kit.createTestProbe();
    final TestProbe<NodeSlots.Command> slots = kit.createTestProbe();
    final TestProbe<RunCaller.Command> caller = kit.createTestProbe();
    final ActorRef<RunEntity.Command> entity =
        kit.spawn(
            RunEntity.create(
                "t1",
                shard.ref(),
                new HostServices(runtime.ref(), slots.ref(), HAND_OFF, LINGER, "node-a")));
    final RunRequest request = RunRequest.of("t1", new CapsuleRef.Registered("echo"), "hi");

    /** Start, sealed, slot granted, run started: returns the run's listener. */
    ActorRef<RunEvent> running() {
      return running(true);
    }

    /** As above; without the caller's seal when {@code sealed} is false (a start on its way). */
    ActorRef<RunEvent> running(boolean sealed) {
      entity.tell(new RunEntity.Start(request, 1, caller.ref()));
      assertEquals(new RunCaller.Hosted(1, entity, "node-a"), caller.receiveMessage());
      if (sealed) {
        entity.tell(new RunEntity.Sealed(1, caller.ref()));
      }
      NodeSlots.Acquire acquire = slots.expectMessageClass(NodeSlots.Acquire.class);
      acquire.replyTo().tell(new NodeSlots.Granted("t1"));
      CapsuleRuntime.StartRun start = runtime.expectMessageClass(CapsuleRuntime.StartRun.class);
      assertEquals(request, start.request());
      batches = start.listenerBatches().orElseThrow();
      return start.listener().orElseThrow();
    }

    ActorRef<List<RunEvent>> batches;

    /** Passivation asked, and no outcome is sent again after it. */
    void passivatesAndSendsNothingMore() {
      shard.expectMessageClass(ClusterSharding.Passivate.class);
      time.timePasses(RunEntity.RESEND_OUTCOME_EVERY.multipliedBy(3));
      caller.expectNoMessage(Duration.ofMillis(100));
    }
  }

  @Test
  void aBatchCrossesAsNumberedMessagesOfAtMost64EventsInOrderWithTheSingleOnes() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running();
    List<RunEvent> batch = new ArrayList<>();
    for (int i = 0; i < RunEntity.MAX_EVENTS_PER_MESSAGE + 1; i++) {
      batch.add(new RunEvent.Note("t1", "n" + i));
    }
    run.tell(new RunEvent.Note("t1", "first"));
    rig.batches.tell(List.copyOf(batch));
    run.tell(new RunEvent.Finished(done()));
    assertEquals(
        new RunCaller.Event(1, 0, new RunEvent.Note("t1", "first")), rig.caller.receiveMessage());
    assertEquals(
        new RunCaller.Events(1, 1, batch.subList(0, RunEntity.MAX_EVENTS_PER_MESSAGE)),
        rig.caller.receiveMessage());
    assertEquals(
        new RunCaller.Events(
            1,
            2,
            batch.subList(RunEntity.MAX_EVENTS_PER_MESSAGE, RunEntity.MAX_EVENTS_PER_MESSAGE + 1)),
        rig.caller.receiveMessage());
    assertEquals(
        new RunCaller.Event(1, 3, new RunEvent.Finished(done())), rig.caller.receiveMessage());
  }

  @Test
  void aBatchIsCutBySizeTooAndAnEventTooLargeForAMessageCrossesInNumberedParts() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running();
    RunEvent.Note a = new RunEvent.Note("t1", "a".repeat(15_000));
    RunEvent.Note b = new RunEvent.Note("t1", "b".repeat(15_000));
    RunEvent.Note c = new RunEvent.Note("t1", "c".repeat(15_000));
    RunEvent.Note big = new RunEvent.Note("t1", "é".repeat(150_000)); // ~300 KB of UTF-8
    RunEvent.Note after = new RunEvent.Note("t1", "after");
    rig.batches.tell(List.of(a, b, c, big, after));
    run.tell(new RunEvent.Finished(done()));

    // a and b fit one message of CrossingSize.MESSAGE_CHARS; c does not fit beside them
    assertEquals(new RunCaller.Events(1, 0, List.of(a, b)), rig.caller.receiveMessage());
    assertEquals(new RunCaller.Events(1, 1, List.of(c)), rig.caller.receiveMessage());
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    long seq = 2;
    RunCaller.Part part;
    do {
      part = rig.caller.expectMessageClass(RunCaller.Part.class);
      assertEquals(seq++, part.seq(), "each part is numbered like any message");
      assertTrue(part.bytes().length <= CrossingSize.PART_BYTES, "a part fits a frame");
      bytes.writeBytes(part.bytes());
    } while (!part.last());
    assertTrue(seq >= 5, "300 KB make at least three parts: " + (seq - 2));
    Object whole =
        SerializationExtension.get(Adapter.toClassic(kit.system()))
            .deserialize(bytes.toByteArray(), part.serializer(), part.manifest())
            .get();
    assertEquals(big, ((RunCaller.Event) whole).event());
    assertEquals(new RunCaller.Events(1, seq, List.of(after)), rig.caller.receiveMessage());
    assertEquals(
        new RunCaller.Event(1, seq + 1, new RunEvent.Finished(done())),
        rig.caller.receiveMessage());
  }

  private static RunOutcome done() {
    return new RunOutcome(
        "t1",
        RunStatus.DONE,
        Optional.of("ok"),
        1,
        UsageSplit.ZERO,
        Optional.empty(),
        Optional.empty(),
        "done",
        Optional.empty(),
        Duration.ofSeconds(1));
  }

  @Test
  void passesEventsOnAndPassivatesOnceTheOutcomeIsDelivered() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running();
    run.tell(new RunEvent.Note("t1", "n"));
    assertEquals(
        new RunCaller.Event(1, 0, new RunEvent.Note("t1", "n")), rig.caller.receiveMessage());
    run.tell(new RunEvent.Finished(done()));
    assertEquals(
        new RunCaller.Event(1, 1, new RunEvent.Finished(done())), rig.caller.receiveMessage());
    rig.slots.expectMessageClass(NodeSlots.Release.class);
    rig.shard.expectNoMessage(Duration.ofMillis(100)); // not before the caller confirms it
    rig.entity.tell(new RunEntity.Settled(1, rig.caller.ref()));
    rig.shard.expectMessageClass(ClusterSharding.Passivate.class);

    // A start arriving before the passivation completes gets the outcome, not a second run.
    TestProbe<RunCaller.Command> late = kit.createTestProbe();
    rig.entity.tell(new RunEntity.Start(rig.request, 1, late.ref()));
    late.expectMessageClass(RunCaller.Hosted.class);
    assertEquals(new RunCaller.Event(1, 0, new RunEvent.Finished(done())), late.receiveMessage());
    rig.runtime.expectNoMessage(Duration.ofMillis(100));
    rig.slots.expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void anOutcomeTheCallerHasNotConfirmedIsSentAgainWithItsOwnSeqUntilItIs() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running();
    run.tell(new RunEvent.Note("t1", "n"));
    run.tell(new RunEvent.Finished(done()));
    RunCaller.Event outcome = new RunCaller.Event(1, 1, new RunEvent.Finished(done()));
    rig.caller.expectMessage(new RunCaller.Event(1, 0, new RunEvent.Note("t1", "n")));
    rig.caller.expectMessage(outcome); // say Artery dropped this one on its way
    time.timePasses(RunEntity.RESEND_OUTCOME_EVERY);
    rig.caller.expectMessage(outcome);
    rig.shard.expectNoMessage(Duration.ofMillis(100));

    rig.entity.tell(new RunEntity.Settled(1, rig.caller.ref()));
    rig.passivatesAndSendsNothingMore();
  }

  @Test
  void aCallerThatGaveUpMidRunIsNotSentTheOutcomeNorWaitedFor() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running();
    // The caller found a gap: it cancels and settles before the run ends.
    rig.entity.tell(new RunEntity.Settled(1, rig.caller.ref()));
    rig.entity.tell(new RunEntity.Cancel("its events were lost on the way to its caller"));
    rig.runtime.expectMessageClass(CapsuleRuntime.CancelRun.class);
    rig.caller.expectMessageClass(RunCaller.CancelSeen.class);
    run.tell(new RunEvent.Finished(done()));
    rig.passivatesAndSendsNothingMore();
  }

  @Test
  void aRepeatedStartWhileRunningJoinsTheRunWithoutStartingAnother() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running();
    TestProbe<RunCaller.Command> second = kit.createTestProbe();
    rig.entity.tell(new RunEntity.Start(rig.request, 1, second.ref()));
    second.expectMessageClass(RunCaller.Hosted.class);
    rig.runtime.expectNoMessage(Duration.ofMillis(100));
    rig.slots.expectNoMessage(Duration.ofMillis(100));
    run.tell(new RunEvent.Finished(done()));
    rig.caller.expectMessage(new RunCaller.Event(1, 0, new RunEvent.Finished(done())));
    second.expectMessage(new RunCaller.Event(1, 0, new RunEvent.Finished(done())));
  }

  @Test
  void aHandOffMidRunEndsTheRunHereThenTellsTheCallerTheAttemptWasLost() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running();
    rig.entity.tell(RunEntity.stopMessage());
    CapsuleRuntime.CancelRun cancel =
        rig.runtime.expectMessageClass(CapsuleRuntime.CancelRun.class);
    assertEquals("t1", cancel.taskId());
    run.tell(new RunEvent.Note("t1", "interrupted"));
    rig.caller.expectMessage(new RunCaller.Event(1, 0, new RunEvent.Note("t1", "interrupted")));
    run.tell(new RunEvent.Finished(done())); // the canceled run's own outcome is not the caller's
    RunCaller.Lost lost = rig.caller.expectMessageClass(RunCaller.Lost.class);
    assertEquals(1, lost.attempt());
    assertEquals("node-a", lost.node());
    rig.slots.expectMessageClass(NodeSlots.Release.class);
    TestProbe<Object> watcher = kit.createTestProbe();
    watcher.expectTerminated(rig.entity);
  }

  @Test
  void aHandOffWhoseRunDoesNotEndInTimeStillLosesTheAttemptOnce() {
    Rig rig = new Rig();
    rig.running();
    rig.entity.tell(RunEntity.stopMessage());
    rig.runtime.expectMessageClass(CapsuleRuntime.CancelRun.class);
    time.timePasses(HAND_OFF.minusMillis(1));
    rig.caller.expectNoMessage(Duration.ofMillis(100));
    time.timePasses(Duration.ofMillis(2));
    RunCaller.Lost lost = rig.caller.expectMessageClass(RunCaller.Lost.class);
    assertTrue(lost.reason().contains("did not end"), lost.reason());
    rig.caller.expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void aCancelBeforeAnyStartAnswersALaterStartCanceledAndNeverStartsARun() {
    Rig rig = new Rig();
    rig.entity.tell(new RunEntity.Cancel("changed my mind"));
    rig.entity.tell(new RunEntity.Start(rig.request, 1, rig.caller.ref()));
    rig.caller.expectMessageClass(RunCaller.Hosted.class);
    RunCaller.Event e = rig.caller.expectMessageClass(RunCaller.Event.class);
    RunOutcome o = ((RunEvent.Finished) e.event()).outcome();
    assertTrue(o.canceled(), o.toString());
    rig.slots.expectNoMessage(Duration.ofMillis(100));
    rig.runtime.expectNoMessage(Duration.ofMillis(100));
    rig.shard.expectNoMessage(Duration.ofMillis(100));
    time.timePasses(LINGER);
    rig.shard.expectMessageClass(ClusterSharding.Passivate.class);
  }

  @Test
  void aStartRefusedASlotEndsWithTheCapacityCodeAndNoRun() {
    Rig rig = new Rig();
    rig.entity.tell(new RunEntity.Start(rig.request, 1, rig.caller.ref()));
    rig.caller.expectMessageClass(RunCaller.Hosted.class);
    rig.entity.tell(new RunEntity.Sealed(1, rig.caller.ref()));
    rig.slots
        .expectMessageClass(NodeSlots.Acquire.class)
        .replyTo()
        .tell(new NodeSlots.Refused("t1", "full"));
    RunCaller.Event e = rig.caller.expectMessageClass(RunCaller.Event.class);
    assertEquals(Optional.of("E-CLU-002"), ((RunEvent.Finished) e.event()).outcome().code());
    rig.runtime.expectNoMessage(Duration.ofMillis(100));
    rig.entity.tell(new RunEntity.Settled(1, rig.caller.ref()));
    rig.shard.expectMessageClass(ClusterSharding.Passivate.class);
  }

  @Test
  void aRunEndingWhileItsCallersStartIsStillOnItsWayWaitsForTheSealAndRunsNothingTwice() {
    Rig rig = new Rig();
    ActorRef<RunEvent> run = rig.running(false);
    run.tell(new RunEvent.Finished(done()));
    rig.caller.expectMessage(new RunCaller.Event(1, 0, new RunEvent.Finished(done())));
    rig.slots.expectMessageClass(NodeSlots.Release.class);
    rig.shard.expectNoMessage(Duration.ofMillis(100)); // a repeated start may still come

    rig.entity.tell(new RunEntity.Start(rig.request, 1, rig.caller.ref())); // the repeat
    rig.caller.expectMessageClass(RunCaller.Hosted.class);
    // The outcome not confirmed yet goes again as it was: a second seq would open a gap.
    rig.caller.expectMessage(new RunCaller.Event(1, 0, new RunEvent.Finished(done())));
    rig.runtime.expectNoMessage(Duration.ofMillis(100));
    rig.slots.expectNoMessage(Duration.ofMillis(100));

    rig.entity.tell(new RunEntity.Sealed(1, rig.caller.ref()));
    rig.entity.tell(new RunEntity.Settled(1, rig.caller.ref()));
    rig.shard.expectMessageClass(ClusterSharding.Passivate.class);
    time.timePasses(LINGER.plusSeconds(1)); // the seal wait was cancelled: one passivation
    rig.shard.expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void aCallerThatNeverSealsIsWaitedForAtMostTheLinger() {
    Rig rig = new Rig();
    rig.running(false).tell(new RunEvent.Finished(done()));
    rig.caller.expectMessageClass(RunCaller.Event.class);
    time.timePasses(LINGER.minusMillis(1));
    rig.shard.expectNoMessage(Duration.ofMillis(100));
    time.timePasses(Duration.ofMillis(2));
    rig.shard.expectMessageClass(ClusterSharding.Passivate.class);
  }

  @Test
  void anIncarnationMadeByALateSealPassivatesAtOnceAndLeavesAStartToTheNext() {
    Rig rig = new Rig();
    rig.entity.tell(new RunEntity.Sealed(1, rig.caller.ref()));
    rig.shard.expectMessageClass(ClusterSharding.Passivate.class);
    // A start in the mailbox behind the seal: not run here (it would be stopped at once); the
    // caller repeats it and the repeat reaches the next incarnation.
    rig.entity.tell(new RunEntity.Start(rig.request, 1, rig.caller.ref()));
    rig.caller.expectNoMessage(Duration.ofMillis(100));
    rig.slots.expectNoMessage(Duration.ofMillis(100));
    rig.entity.tell(RunEntity.stopMessage());
    kit.createTestProbe().expectTerminated(rig.entity);
  }
}
