package io.capsule.runtime.javadsl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.runtime.Outcomes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The chunked relay of {@link EmbeddedRuntime#source}: every event once, in order, in chunks of at
 * most {@link RunRelay#CHUNK_MAX}, none held back waiting for more, its own wake-up never handed
 * on, and the outcome completed at {@link RunEvent.Finished}; a batch goes on as one chunk (cut to
 * {@link RunRelay#CHUNK_MAX}) after the single events before it. The plain relay takes batches
 * apart for its listener.
 */
class RunRelayTest {

  private final ActorTestKit kit = ActorTestKit.create();
  private final TestProbe<List<RunEvent>> chunks = kit.createTestProbe();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static RunEvent text(int i) {
    return new RunEvent.TextCompleted("t", "text " + i);
  }

  @Test
  void aBurstOfEventsGoesOnInOrderInChunksAndTheFinishedEndsTheLast() throws Exception {
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    ActorRef<RunEvent> relay = RunRelay.events(kit.spawn(RunRelay.chunked(chunks.ref(), outcome)));
    List<RunEvent> sent = new ArrayList<>();
    for (int i = 0; i < 3 * RunRelay.CHUNK_MAX + 7; i++) {
      sent.add(text(i));
    }
    sent.add(new RunEvent.Finished(Outcomes.done()));
    sent.forEach(relay::tell);

    List<RunEvent> got = new ArrayList<>();
    while (got.size() < sent.size()) {
      List<RunEvent> chunk = chunks.receiveMessage(Duration.ofSeconds(5));
      assertFalse(chunk.isEmpty(), "an empty chunk");
      assertTrue(chunk.size() <= RunRelay.CHUNK_MAX, "a chunk of " + chunk.size());
      got.addAll(chunk);
    }
    assertEquals(sent, got);
    assertEquals(Outcomes.done(), outcome.get(5, TimeUnit.SECONDS));
    chunks.expectTerminated(relay, Duration.ofSeconds(5));
    chunks.expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void aLoneEventGoesOnWithoutWaitingForMore() {
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    ActorRef<RunEvent> relay = RunRelay.events(kit.spawn(RunRelay.chunked(chunks.ref(), outcome)));
    relay.tell(text(1));
    assertEquals(List.of(text(1)), chunks.receiveMessage(Duration.ofSeconds(5)));
    relay.tell(text(2));
    assertEquals(List.of(text(2)), chunks.receiveMessage(Duration.ofSeconds(5)));
    chunks.expectNoMessage(Duration.ofMillis(100)); // the wake-ups are never handed on
    assertFalse(outcome.isDone());
  }

  @Test
  void aSourcesConsumerHearsEveryEventOnceInOrderThenTheStreamCompletes() throws Exception {
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    TestProbe<ActorRef<RunEvent>> relayRef = kit.createTestProbe();
    var events =
        org.apache.pekko.stream.javadsl.Source.<List<RunEvent>>actorRef(
                m -> Optional.empty(),
                m -> Optional.empty(),
                64,
                org.apache.pekko.stream.OverflowStrategy.fail())
            .mapMaterializedValue(
                ref -> {
                  ActorRef<RunEvent> relay =
                      RunRelay.events(
                          kit.spawn(
                              RunRelay.chunked(
                                  org.apache.pekko.actor.typed.javadsl.Adapter.toTyped(ref),
                                  outcome)));
                  relayRef.ref().tell(relay);
                  return relay;
                })
            .<RunEvent>mapConcat(chunk -> chunk)
            .takeWhile(e -> !(e instanceof RunEvent.Finished), true)
            .runWith(Sink.seq(), kit.system());
    ActorRef<RunEvent> relay = relayRef.receiveMessage();
    List<RunEvent> sent = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      sent.add(text(i));
    }
    sent.add(new RunEvent.Finished(Outcomes.done()));
    sent.forEach(relay::tell);
    assertEquals(sent, events.toCompletableFuture().get(10, TimeUnit.SECONDS));
  }

  @Test
  void aBatchGoesOnAsOneChunkAfterTheSingleEventsBeforeItAndALongOneIsCut() throws Exception {
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    ActorRef<Object> relay = kit.spawn(RunRelay.chunked(chunks.ref(), outcome));
    List<RunEvent> small = List.of(text(2), text(3));
    List<RunEvent> big = new ArrayList<>();
    for (int i = 0; i < RunRelay.CHUNK_MAX + 10; i++) {
      big.add(text(100 + i));
    }
    relay.tell(text(1)); // held until the wake-up, which is queued behind the batches
    relay.tell(small);
    relay.tell(List.copyOf(big));
    relay.tell(new RunEvent.Finished(Outcomes.done()));

    assertEquals(List.of(text(1)), chunks.receiveMessage(Duration.ofSeconds(5)));
    assertEquals(small, chunks.receiveMessage(Duration.ofSeconds(5)));
    assertEquals(big.subList(0, RunRelay.CHUNK_MAX), chunks.receiveMessage(Duration.ofSeconds(5)));
    assertEquals(
        big.subList(RunRelay.CHUNK_MAX, big.size()), chunks.receiveMessage(Duration.ofSeconds(5)));
    assertEquals(
        List.of(new RunEvent.Finished(Outcomes.done())),
        chunks.receiveMessage(Duration.ofSeconds(5)));
    assertEquals(Outcomes.done(), outcome.get(5, TimeUnit.SECONDS));
    chunks.expectTerminated(relay, Duration.ofSeconds(5));
  }

  @Test
  void thePlainRelayHandsABatchOnToItsListenerOneMessagePerEventInOrder() throws Exception {
    TestProbe<RunEvent> listener = kit.createTestProbe();
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    ActorRef<Object> relay = kit.spawn(RunRelay.create(Optional.of(listener.ref()), outcome));
    relay.tell(text(1));
    relay.tell(List.of(text(2), text(3)));
    relay.tell(text(4));
    relay.tell(new RunEvent.Finished(Outcomes.done()));
    for (int i = 1; i <= 4; i++) {
      assertEquals(text(i), listener.receiveMessage());
    }
    assertEquals(new RunEvent.Finished(Outcomes.done()), listener.receiveMessage());
    assertEquals(Outcomes.done(), outcome.get(5, TimeUnit.SECONDS));
    listener.expectTerminated(relay, Duration.ofSeconds(5));
  }
}
