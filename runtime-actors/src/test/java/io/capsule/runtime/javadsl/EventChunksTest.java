package io.capsule.runtime.javadsl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.capsule.runtime.Outcomes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.BufferOverflowException;
import org.apache.pekko.stream.javadsl.AsPublisher;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * {@link EventChunks}, the last stage of {@link EmbeddedRuntime#source}: chunks out as single
 * events in order, through {@link RunEvent.Finished} and no further, and a consumer more than the
 * bound behind fails the stream with Pekko's buffer overflow, one within it loses nothing.
 */
class EventChunksTest {

  private static final int BOUND = 100;

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static RunEvent text(int i) {
    return new RunEvent.TextCompleted("t", "text " + i);
  }

  private static RunEvent.Finished finished() {
    return new RunEvent.Finished(Outcomes.done());
  }

  private static List<List<RunEvent>> chunksOf(List<RunEvent> events, int size) {
    List<List<RunEvent>> chunks = new ArrayList<>();
    for (int from = 0; from < events.size(); from += size) {
      chunks.add(List.copyOf(events.subList(from, Math.min(events.size(), from + size))));
    }
    return chunks;
  }

  private List<RunEvent> run(List<List<RunEvent>> chunks) throws Exception {
    return Source.from(chunks)
        .via(new EventChunks(BOUND))
        .runWith(Sink.seq(), kit.system())
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  @Test
  void chunksComeOutAsSingleEventsInOrderThroughTheFinishedAndNoFurther() throws Exception {
    List<RunEvent> events = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      events.add(text(i));
    }
    events.add(finished());
    List<List<RunEvent>> chunks = new ArrayList<>(chunksOf(events, 7));
    chunks.add(1, List.of()); // an empty chunk changes nothing
    chunks.add(List.of(text(99))); // after the Finished: never emitted
    List<RunEvent> withLate = new ArrayList<>(chunks.get(chunks.size() - 2));
    withLate.add(text(98)); // in the Finished's own chunk, after it
    chunks.set(chunks.size() - 2, withLate);
    assertEquals(events, run(chunks));
  }

  @Test
  void withoutAFinishedTheStreamCompletesOnceEveryEventIsOut() throws Exception {
    List<RunEvent> events = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      events.add(text(i));
    }
    assertEquals(events, run(chunksOf(events, 3)));
    assertEquals(List.of(), run(List.of()));
  }

  /** A consumer that asks for events only when told to. */
  private static final class Consumer implements Subscriber<RunEvent> {
    final List<RunEvent> received = Collections.synchronizedList(new ArrayList<>());
    final CompletableFuture<Subscription> subscription = new CompletableFuture<>();
    final CompletableFuture<Throwable> ended = new CompletableFuture<>();
    final CompletableFuture<Void> gotThree = new CompletableFuture<>();

    @Override
    public void onSubscribe(Subscription s) {
      subscription.complete(s);
    }

    @Override
    public void onNext(RunEvent e) {
      received.add(e);
      if (received.size() == 3) {
        gotThree.complete(null);
      }
    }

    @Override
    public void onError(Throwable t) {
      ended.complete(t);
    }

    @Override
    public void onComplete() {
      ended.complete(null);
    }
  }

  /**
   * {@code events} to a consumer that asks for 3 and then for nothing: the first 3 as a chunk, and
   * once the consumer has them, the rest in chunks of 10; completes when the rest has all gone into
   * the stage (it takes every chunk as it comes).
   */
  private CompletableFuture<Void> behind(Consumer consumer, List<RunEvent> events)
      throws Exception {
    CompletableFuture<Boolean> gate = new CompletableFuture<>();
    CompletableFuture<Void> restIn = new CompletableFuture<>();
    List<List<RunEvent>> rest = chunksOf(events.subList(3, events.size()), 10);
    Source.single(events.subList(0, 3))
        .concat(
            Source.completionStage(gate)
                .mapConcat(open -> rest)
                .watchTermination((mat, done) -> done.thenRun(() -> restIn.complete(null))))
        .via(new EventChunks(BOUND))
        .runWith(Sink.asPublisher(AsPublisher.WITHOUT_FANOUT), kit.system())
        .subscribe(consumer);
    consumer.subscription.get(10, TimeUnit.SECONDS).request(3);
    consumer.gotThree.get(10, TimeUnit.SECONDS);
    gate.complete(true);
    return restIn;
  }

  @Test
  void aConsumerMoreThanTheBoundBehindFailsTheStreamWithABufferOverflow() throws Exception {
    List<RunEvent> events = new ArrayList<>();
    for (int i = 0; i < BOUND + 3 + 10 + 5; i++) {
      events.add(text(i));
    }
    Consumer consumer = new Consumer();
    behind(consumer, events);
    Throwable failure = consumer.ended.get(10, TimeUnit.SECONDS);
    assertInstanceOf(BufferOverflowException.class, failure);
    assertEquals("Buffer overflow (max capacity was: " + BOUND + ")!", failure.getMessage());
    assertEquals(events.subList(0, 3), consumer.received);
  }

  @Test
  void aConsumerWithinTheBoundGetsEveryEventWhenItAsksAgain() throws Exception {
    List<RunEvent> events = new ArrayList<>();
    for (int i = 0; i < BOUND + 3 - 1; i++) {
      events.add(text(i));
    }
    events.add(finished());
    Consumer consumer = new Consumer();
    behind(consumer, events).get(10, TimeUnit.SECONDS);
    assertEquals(3, consumer.received.size());
    consumer.subscription.get().request(Long.MAX_VALUE);
    assertNull(consumer.ended.get(10, TimeUnit.SECONDS), "the stream completed");
    assertEquals(events, consumer.received);
  }
}
