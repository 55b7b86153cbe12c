package io.capsule.runtime.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.sharding.typed.testkit.javadsl.TestEntityRef;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The caller's side on manual time, its entity a probe: resends, the start timeout, node loss
 * without and with retry, stragglers of a lost attempt, and a cancel that stops retries.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCallerTest {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration RESEND = Duration.ofSeconds(2);

  private final ActorTestKit kit = ActorTestKit.create(ManualTime.config());
  private final ManualTime time = ManualTime.get(kit.system());

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  private final class Rig {
    final TestProbe<RunEntity.Command> sharding = kit.createTestProbe(); // the EntityRef's target
    final TestProbe<RunEvent> downstream = kit.createTestProbe();
    final ActorRef<RunCaller.Command> caller;
    final RunRequest request;

    Rig(int retries) {
      request =
          RunRequest.of("t1", new CapsuleRef.Registered("echo"), "hi").retryOnNodeLoss(retries);
      caller =
          kit.spawn(
              RunCaller.create(
                  request,
                  TestEntityRef.of(RunEntity.TYPE_KEY, "t1", sharding.ref()),
                  downstream.ref(),
                  START_TIMEOUT,
                  RESEND));
    }

    RunEntity.Start start() {
      return sharding.expectMessageClass(RunEntity.Start.class);
    }

    /** The start arrives and an entity (a probe) answers for it. */
    TestProbe<RunEntity.Command> hostedBy(int attempt) {
      assertEquals(attempt, start().attempt());
      TestProbe<RunEntity.Command> entity = kit.createTestProbe();
      caller.tell(new RunCaller.Hosted(attempt, entity.ref(), "node-" + attempt));
      assertEquals(new RunEntity.Sealed(attempt, caller), sharding.receiveMessage());
      return entity;
    }

    /** A cancel reaches the entity through sharding (after any repeated starts). */
    void expectCancel() {
      sharding.fishForMessage(
          Duration.ofSeconds(3),
          m ->
              m instanceof RunEntity.Cancel
                  ? FishingOutcomes.complete()
                  : FishingOutcomes.continueAndIgnore());
    }

    RunOutcome outcome() {
      RunOutcome o = downstream.expectMessageClass(RunEvent.Finished.class).outcome();
      downstream.expectNoMessage(Duration.ofMillis(100));
      return o;
    }
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
  void repeatsAnUnansweredStartAndGivesUpWithNoRunnerAtTheTimeout() {
    Rig rig = new Rig(0);
    rig.start();
    time.timePasses(RESEND);
    assertEquals(1, rig.start().attempt(), "the same attempt again");
    time.timePasses(START_TIMEOUT);
    rig.expectCancel();
    assertEquals(Optional.of("E-CLU-003"), rig.outcome().code());
  }

  @Test
  void aLostHostWithoutRetryEndsTheRunOnceWithNodeLost() {
    Rig rig = new Rig(0);
    TestProbe<RunEntity.Command> entity = rig.hostedBy(1);
    time.timePasses(START_TIMEOUT.plusSeconds(1)); // answered: the timeout no longer fires
    rig.downstream.expectNoMessage(Duration.ofMillis(100));
    rig.caller.tell(new RunCaller.Event(1, 0, new RunEvent.Note("t1", "n")));
    rig.downstream.expectMessage(new RunEvent.Note("t1", "n"));
    entity.stop(); // its node is gone
    RunOutcome o = rig.outcome();
    assertEquals(RunStatus.FAILED, o.status());
    assertEquals(Optional.of("E-CLU-001"), o.code());
    assertTrue(o.message().contains("node-1"), o.message());
  }

  @Test
  void theCallerConfirmsItsOutcomeToTheEntityThatHostsIt() {
    Rig rig = new Rig(0);
    TestProbe<RunEntity.Command> entity = rig.hostedBy(1);
    rig.caller.tell(
        new RunCaller.Events(
            1, 0, List.of(new RunEvent.Note("t1", "n"), new RunEvent.Finished(done()))));
    rig.downstream.expectMessage(new RunEvent.Note("t1", "n"));
    assertEquals(done(), rig.outcome());
    entity.expectMessage(new RunEntity.Settled(1, rig.caller));
    rig.sharding.expectNoMessage(Duration.ofMillis(100)); // its own ref, never through sharding
  }

  @Test
  void numberedSinglesAndBatchesInOrderReachDownstreamOneEventEach() {
    Rig rig = new Rig(0);
    rig.hostedBy(1);
    rig.caller.tell(new RunCaller.Event(1, 0, new RunEvent.Note("t1", "a")));
    rig.caller.tell(
        new RunCaller.Events(
            1, 1, List.of(new RunEvent.Note("t1", "b"), new RunEvent.Note("t1", "c"))));
    rig.caller.tell(new RunCaller.Event(1, 2, new RunEvent.Finished(done())));
    rig.downstream.expectMessage(new RunEvent.Note("t1", "a"));
    rig.downstream.expectMessage(new RunEvent.Note("t1", "b"));
    rig.downstream.expectMessage(new RunEvent.Note("t1", "c"));
    assertEquals(done(), rig.outcome());
  }

  @Test
  void aMissingMessageEndsTheRunWithEventsLostAndCancelsItNeverAFinishedThatLooksComplete() {
    Rig rig = new Rig(0);
    TestProbe<RunEntity.Command> entity = rig.hostedBy(1);
    rig.caller.tell(new RunCaller.Event(1, 0, new RunEvent.Note("t1", "a")));
    // messages 1 and 2 were dropped on the way (a full outbound queue)
    rig.caller.tell(new RunCaller.Events(1, 3, List.of(new RunEvent.Note("t1", "d"))));
    rig.caller.tell(new RunCaller.Event(1, 4, new RunEvent.Finished(done())));
    rig.downstream.expectMessage(new RunEvent.Note("t1", "a"));
    RunOutcome o = rig.outcome();
    assertEquals(RunStatus.FAILED, o.status());
    assertEquals(Optional.of("E-CLU-004"), o.code());
    assertTrue(o.message().contains("messages 1 to 2"), o.message());
    assertTrue(o.message().contains("lost"), o.message());
    rig.expectCancel();
    // It has its (failed) outcome: the entity need not keep sending it the run's.
    entity.expectMessage(new RunEntity.Settled(1, rig.caller));
  }

  /** {@code e} as the parts an entity sends, from {@code seq} on, of at most {@code size} bytes. */
  private List<RunCaller.Part> parts(RunEvent e, long seq, int size) {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
    RunCaller.Event whole = new RunCaller.Event(1, -1, e);
    Serializer serializer = serialization.findSerializerFor(whole);
    byte[] bytes = serialization.serialize(whole).get();
    List<RunCaller.Part> parts = new ArrayList<>();
    for (int from = 0; from < bytes.length; from += size) {
      int to = Math.min(bytes.length, from + size);
      parts.add(
          new RunCaller.Part(
              1,
              seq++,
              serializer.identifier(),
              Serializers.manifestFor(serializer, whole),
              Arrays.copyOfRange(bytes, from, to),
              to == bytes.length));
    }
    return parts;
  }

  @Test
  void anEventInPartsReachesDownstreamWholeOnceItsLastPartIsIn() {
    Rig rig = new Rig(0);
    rig.hostedBy(1);
    RunEvent.TextCompleted big = new RunEvent.TextCompleted("t1", "x".repeat(300_000));
    List<RunCaller.Part> parts = parts(big, 0, 100_000);
    assertEquals(4, parts.size());
    for (RunCaller.Part p : parts.subList(0, 3)) {
      rig.caller.tell(p);
    }
    rig.downstream.expectNoMessage(Duration.ofMillis(100)); // not before the last part
    rig.caller.tell(parts.get(3));
    rig.downstream.expectMessage(big);
    rig.caller.tell(new RunCaller.Event(1, 4, new RunEvent.Finished(done())));
    assertEquals(done(), rig.outcome());
  }

  @Test
  void aMissingPartEndsTheRunWithEventsLost() {
    Rig rig = new Rig(0);
    rig.hostedBy(1);
    List<RunCaller.Part> parts =
        parts(new RunEvent.TextCompleted("t1", "x".repeat(300_000)), 0, 100_000);
    rig.caller.tell(parts.get(0));
    rig.caller.tell(parts.get(2));
    RunOutcome o = rig.outcome();
    assertEquals(Optional.of("E-CLU-004"), o.code());
    assertTrue(o.message().contains("messages 1 to 1"), o.message());
  }

  @Test
  void anEventLargerThanACallerBuffersEndsTheRunAndCancelsIt() {
    Rig rig = new Rig(0);
    rig.hostedBy(1);
    byte[] half = new byte[RunCaller.MAX_EVENT_BYTES / 2];
    rig.caller.tell(new RunCaller.Part(1, 0, 1, "m", half, false));
    rig.caller.tell(new RunCaller.Part(1, 1, 1, "m", half, false));
    rig.caller.tell(new RunCaller.Part(1, 2, 1, "m", new byte[1], true));
    RunOutcome o = rig.outcome();
    assertEquals(Optional.of("E-CLU-004"), o.code());
    assertTrue(o.message().contains("larger than the " + RunCaller.MAX_EVENT_BYTES), o.message());
    rig.expectCancel();
  }

  @Test
  void aLostHostWithARetryLeftMarksTheAttemptAndRunsAgainIgnoringItsStragglers() {
    Rig rig = new Rig(1);
    TestProbe<RunEntity.Command> first = rig.hostedBy(1);
    first.stop();
    RunEvent.AttemptLost lost = rig.downstream.expectMessageClass(RunEvent.AttemptLost.class);
    assertEquals(1, lost.attempt());
    assertEquals("node-1", lost.node());
    assertEquals("E-CLU-001", lost.code());
    rig.hostedBy(2);
    rig.caller.tell(new RunCaller.Event(1, 0, new RunEvent.Note("t1", "late from attempt 1")));
    rig.caller.tell(new RunCaller.Event(2, 0, new RunEvent.Finished(done())));
    assertEquals(done(), rig.outcome());
  }

  @Test
  void aHandOffLossUsesTheRetryAndALaterLossWithoutOneEnds() {
    Rig rig = new Rig(1);
    rig.hostedBy(1);
    rig.caller.tell(new RunCaller.Lost(1, "node-1", "the node left the cluster"));
    rig.downstream.expectMessageClass(RunEvent.AttemptLost.class);
    rig.hostedBy(2);
    rig.caller.tell(new RunCaller.Lost(2, "node-2", "the node left the cluster"));
    assertEquals(Optional.of("E-CLU-001"), rig.outcome().code());
  }

  @Test
  void aCanceledRunIsNotRetriedWhenItsNodeIsLost() {
    Rig rig = new Rig(3);
    TestProbe<RunEntity.Command> entity = rig.hostedBy(1);
    rig.caller.tell(new RunCaller.CancelRequested("stop"));
    rig.sharding.expectMessage(new RunEntity.Cancel("stop"));
    entity.stop();
    assertEquals(Optional.of("E-CLU-001"), rig.outcome().code());
    rig.sharding.expectNoMessage(Duration.ofMillis(100)); // no new start
  }

  @Test
  void sealsItsStartsAfterTheFirstAnswerAndSendsNoneAfterTheSeal() {
    Rig rig = new Rig(0);
    rig.start();
    time.timePasses(RESEND);
    rig.start(); // repeated: no answer yet
    TestProbe<RunEntity.Command> entity = kit.createTestProbe();
    rig.caller.tell(new RunCaller.Hosted(1, entity.ref(), "node-1"));
    rig.caller.tell(new RunCaller.Hosted(1, entity.ref(), "node-1")); // the repeat's answer
    assertEquals(new RunEntity.Sealed(1, rig.caller), rig.sharding.receiveMessage());
    time.timePasses(RESEND.multipliedBy(3));
    rig.sharding.expectNoMessage(Duration.ofMillis(100)); // one seal, no start after it
  }
}
