package io.capsule.runtime.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
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
 * A streamed answer's deltas cross nodes without the text so far each one repeats, and reach the
 * caller's downstream exactly as the run made them ({@link SoFar}): through the entity's side
 * ({@link Callers}), the bound serializer, and the caller ({@link RunCaller}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeltasAcrossNodesTest {

  private final ActorTestKit kit = ActorTestKit.create(ManualTime.config());
  private final Serialization serialization =
      SerializationExtension.get(Adapter.toClassic(kit.system()));

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  /**
   * What a run's ledger makes of an answer streamed in {@code deltas} pieces of 50 characters,
   * thinking first, then a second message: each delta carries the whole message until it.
   */
  private static List<RunEvent> streamedAnswer(int deltas) {
    List<RunEvent> out = new ArrayList<>();
    String piece = "0123456789".repeat(5);
    out.add(new RunEvent.ThinkingDelta("t1", "Hmm, ", "Hmm, "));
    out.add(new RunEvent.ThinkingDelta("t1", "let me see.", "Hmm, let me see."));
    out.add(new RunEvent.ThinkingCompleted("t1", "Hmm, let me see."));
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < deltas; i++) {
      text.append(piece);
      out.add(new RunEvent.TextDelta("t1", piece, text.toString()));
    }
    out.add(new RunEvent.TextCompleted("t1", text.toString()));
    out.add(new RunEvent.Note("t1", "a tool ran"));
    out.add(new RunEvent.TextDelta("t1", "Done", "Done")); // a new message starts over
    out.add(new RunEvent.TextDelta("t1", ".", "Done."));
    return out;
  }

  @Test
  void aDeltaThatFollowsOnCrossesWithoutItsTextSoFarAndComesBackWhole() {
    List<RunEvent> made = streamedAnswer(3);
    SoFar entity = new SoFar();
    SoFar caller = new SoFar();
    List<RunEvent> crossed = new ArrayList<>();
    for (RunEvent e : made) {
      RunEvent shrunk = entity.shrink(e);
      crossed.add(shrunk);
      assertEquals(e, caller.restore(shrunk));
    }
    // Each delta follows on from the one before (the first from nothing) except the first of a
    // new message, which crosses whole.
    assertNull(((RunEvent.ThinkingDelta) crossed.get(0)).soFar());
    assertNull(((RunEvent.ThinkingDelta) crossed.get(1)).soFar());
    assertNull(((RunEvent.TextDelta) crossed.get(3)).soFar());
    assertNull(((RunEvent.TextDelta) crossed.get(5)).soFar());
    assertEquals("Done", ((RunEvent.TextDelta) crossed.get(8)).soFar(), "a new message");
    assertNull(((RunEvent.TextDelta) crossed.get(9)).soFar());
    assertSame(made.get(6), crossed.get(6), "other events cross as they are");
    assertSame(made.get(7), crossed.get(7));
  }

  @Test
  void aDeltaWhoseTextSoFarIsNotThePreviousOnePlusItselfCrossesWhole() {
    SoFar entity = new SoFar();
    entity.shrink(new RunEvent.TextDelta("t1", "abc", "abc"));
    // Same length as "abc" + "d", ends with "d", but the start was rewritten.
    RunEvent rewritten = new RunEvent.TextDelta("t1", "d", "xbcd");
    assertSame(rewritten, entity.shrink(rewritten));
    RunEvent longer = new RunEvent.TextDelta("t1", "e", "xbcdxe");
    assertSame(longer, entity.shrink(longer), "more than the previous one plus the delta");
  }

  @Test
  void aLongAnswerPutsLinearNotQuadraticBytesBetweenNodesAndReachesDownstreamAsMade() {
    List<RunEvent> made = streamedAnswer(1000); // a 50 000-character answer
    TestProbe<RunCaller.Command> wire = kit.createTestProbe();
    Callers remote = new Callers(serialization, c -> true);
    remote.join(wire.ref(), 1);
    // As a run publishes them: most in batches, some alone.
    remote.publish(made.get(0));
    for (int from = 1; from < made.size(); from += 100) {
      remote.publishAll(made.subList(from, Math.min(made.size(), from + 100)), 64);
    }

    // Each message through the serializer Artery would use, as the other node reads it.
    List<RunCaller.Command> arrived = new ArrayList<>();
    long bytes = 0;
    for (RunCaller.Command sent : everything(wire)) {
      byte[] b = serialization.serialize(sent).get();
      bytes += b.length;
      Serializer s = serialization.findSerializerFor(sent);
      arrived.add(
          (RunCaller.Command)
              serialization.deserialize(b, s.identifier(), Serializers.manifestFor(s, sent)).get());
    }
    // With the text so far in every delta: 50 × (1 + 2 + … + 1000) ≈ 25 MB.
    assertTrue(bytes < 200_000, "bytes between nodes for a 50 000-character answer: " + bytes);

    TestProbe<RunEntity.Command> sharding = kit.createTestProbe();
    TestProbe<RunEvent> downstream = kit.createTestProbe();
    ActorRef<RunCaller.Command> caller =
        kit.spawn(
            RunCaller.create(
                RunRequest.of("t1", new CapsuleRef.Registered("echo"), "hi"),
                TestEntityRef.of(RunEntity.TYPE_KEY, "t1", sharding.ref()),
                downstream.ref(),
                Duration.ofSeconds(60),
                Duration.ofSeconds(2)));
    sharding.expectMessageClass(RunEntity.Start.class);
    caller.tell(new RunCaller.Hosted(1, kit.createTestProbe(RunEntity.Command.class).ref(), "n2"));
    arrived.forEach(caller::tell);
    for (RunEvent e : made) {
      downstream.expectMessage(e);
    }
  }

  @Test
  void aCallerInThisJvmGetsTheEventsAsTheyAre() {
    TestProbe<RunCaller.Command> local = kit.createTestProbe();
    Callers callers = new Callers(serialization); // probes are local: nothing to shrink
    callers.join(local.ref(), 1);
    List<RunEvent> made = streamedAnswer(3);
    callers.publishAll(made, 64);
    RunCaller.Events got = (RunCaller.Events) local.receiveMessage();
    assertEquals(made, got.events());
  }

  @Test
  void aNewAttemptStartsWithTheWholeTextSoFar() {
    TestProbe<RunCaller.Command> wire = kit.createTestProbe();
    Callers remote = new Callers(serialization, c -> true);
    remote.join(wire.ref(), 1);
    remote.publish(new RunEvent.TextDelta("t1", "a", "a"));
    remote.join(wire.ref(), 2); // the caller's next attempt: it has seen nothing of this one
    remote.publish(new RunEvent.TextDelta("t1", "b", "ab"));
    wire.receiveMessage();
    RunCaller.Event second = (RunCaller.Event) wire.receiveMessage();
    assertEquals(new RunEvent.TextDelta("t1", "b", "ab"), second.event());
  }

  /** What the probe got: the entity's side tells synchronously, so all of it is there now. */
  private static List<RunCaller.Command> everything(TestProbe<RunCaller.Command> wire) {
    List<RunCaller.Command> got = new ArrayList<>();
    while (true) {
      try {
        got.add(wire.receiveMessage(Duration.ofMillis(100)));
      } catch (AssertionError noMore) {
        return got;
      }
    }
  }
}
