package io.capsule.protocol.ws;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.javadsl.BroadcastHub;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;

/**
 * Offers elements to a back-pressured {@link SourceQueueWithComplete} one after the other, so they
 * enter the stream in call order even though each offer completes asynchronously. The chain of
 * pending offers is bounded by whoever calls: every caller in this package waits for the returned
 * stage (stream back-pressure) or holds the element in a bounded buffer anyway.
 *
 * <p>Not thread-safe: call from one actor only.
 */
public final class OrderedQueue<T> {
  /** A failure carried in the stream behind the elements offered before it. */
  private record Failed(Throwable cause) {}

  private final SourceQueueWithComplete<? super T> queue;

  /** The same queue when failures travel in the stream ({@link #broadcast}), else null. */
  private final SourceQueueWithComplete<Object> inBand;

  private CompletionStage<Done> tail = CompletableFuture.completedFuture(Done.getInstance());

  public OrderedQueue(SourceQueueWithComplete<T> queue) {
    this.queue = queue;
    this.inBand = null;
  }

  private OrderedQueue(SourceQueueWithComplete<Object> queue, boolean inBand) {
    this.queue = queue;
    this.inBand = inBand ? queue : null;
  }

  /**
   * A queue feeding a broadcast hub (any number of consumers, back-pressure until the first
   * attaches) whose {@link #fail} reaches consumers only after every element offered before it.
   * Pekko fails a queue source and a broadcast hub at once, dropping what they buffer; here the
   * queue buffers nothing (an offer completes once the hub took the element) and the failure is an
   * element of its own, behind the others, thrown on the consumers' side.
   *
   * @param buffer the broadcast hub's buffer (a power of two): the bound on the backlog
   */
  public static <T> Pair<OrderedQueue<T>, Source<T, NotUsed>> broadcast(
      Class<T> type, int buffer, Materializer materializer) {
    Pair<SourceQueueWithComplete<Object>, Source<Object, NotUsed>> q =
        Source.<Object>queue(0, OverflowStrategy.backpressure())
            .toMat(BroadcastHub.of(Object.class, buffer), Keep.both())
            .run(materializer);
    Source<T, NotUsed> out =
        q.second()
            .map(
                o -> {
                  if (o instanceof Failed f) {
                    throw f.cause() instanceof Exception e
                        ? e
                        : new IllegalStateException(f.cause());
                  }
                  return type.cast(o);
                });
    return Pair.create(new OrderedQueue<>(q.first(), true), out);
  }

  /** Completes once the element is in the stream's buffer; fails if the stream is gone. */
  public CompletionStage<Done> offer(T element) {
    tail = chain(() -> queue.offer(element));
    return tail;
  }

  /** Completes when every element offered so far has entered the stream (or failed to). */
  public CompletionStage<Done> drained() {
    return tail.handle((d, e) -> Done.getInstance());
  }

  /** Completes the stream after every element offered so far. */
  public void complete() {
    drained().thenRun(queue::complete);
  }

  /** Fails the stream after every element offered so far. */
  public void fail(Throwable cause) {
    if (inBand != null) {
      tail = chain(() -> inBand.offer(new Failed(cause)));
      drained().thenRun(inBand::complete);
    } else {
      drained().thenRun(() -> queue.fail(cause));
    }
  }

  private CompletionStage<Done> chain(
      java.util.function.Supplier<CompletionStage<QueueOfferResult>> offer) {
    return tail.handle((d, e) -> Done.getInstance())
        .thenCompose(d -> offer.get())
        .thenApply(
            r -> {
              if (r != QueueOfferResult.enqueued()) {
                throw new IllegalStateException("stream no longer accepts elements: " + r);
              }
              return Done.getInstance();
            });
  }
}
