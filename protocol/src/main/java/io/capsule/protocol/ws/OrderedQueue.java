package io.capsule.protocol.ws;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.stream.QueueOfferResult;
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
  private final SourceQueueWithComplete<T> queue;
  private CompletionStage<Done> tail = CompletableFuture.completedFuture(Done.getInstance());

  public OrderedQueue(SourceQueueWithComplete<T> queue) {
    this.queue = queue;
  }

  /** Completes once the element is in the stream's buffer; fails if the stream is gone. */
  public CompletionStage<Done> offer(T element) {
    tail =
        tail.handle((d, e) -> Done.getInstance())
            .thenCompose(d -> queue.offer(element))
            .thenApply(
                r -> {
                  if (r != QueueOfferResult.enqueued()) {
                    throw new IllegalStateException("stream no longer accepts elements: " + r);
                  }
                  return Done.getInstance();
                });
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
    drained().thenRun(() -> queue.fail(cause));
  }
}
