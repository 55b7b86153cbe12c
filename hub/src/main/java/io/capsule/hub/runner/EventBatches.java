package io.capsule.hub.runner;

import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.ws.OrderedQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The brain's events into the hub's event stream, a batch at a time: what the effects of one
 * journal write publish (often hundreds of progress events) enters the stream as one element, so
 * the ordered offer (a few futures and a stream callback) is paid per write, not per event. Outside
 * a write's effects ({@link #holding}) an event goes out at once, alone.
 *
 * <p>Not thread-safe: the brain's actor only, as {@link OrderedQueue}.
 */
final class EventBatches {
  /** One element of the stream: events in the order the brain published them. */
  record Batch(List<HubEvent> events) {}

  private final OrderedQueue<Batch> queue;
  private List<HubEvent> held = new ArrayList<>();
  private boolean holding;

  EventBatches(OrderedQueue<Batch> queue) {
    this.queue = queue;
  }

  /**
   * A queue feeding a broadcast hub of {@code buffer} batches, and the events one by one as its
   * consumers see them (see {@link OrderedQueue#broadcast}).
   */
  static Pair<EventBatches, Source<HubEvent, NotUsed>> broadcast(
      int buffer, Materializer materializer) {
    Pair<OrderedQueue<Batch>, Source<Batch, NotUsed>> q =
        OrderedQueue.broadcast(Batch.class, buffer, materializer);
    return Pair.create(new EventBatches(q.first()), q.second().mapConcat(Batch::events));
  }

  /** Publishes {@code e}: with what else is held while {@link #holding}, else at once. */
  void offer(HubEvent e) {
    held.add(e);
    if (!holding) {
      flush();
    }
  }

  /** Runs {@code work} holding what it publishes, then publishes that as one batch. */
  <T> T holding(java.util.function.Supplier<T> work) {
    if (holding) {
      return work.get();
    }
    holding = true;
    try {
      return work.get();
    } finally {
      holding = false;
      flush();
    }
  }

  /** Completes once every event published so far (held ones too) has entered the stream. */
  CompletionStage<Done> drained() {
    flush();
    return queue.drained();
  }

  /** Completes the stream after every event published so far. */
  void complete() {
    flush();
    queue.complete();
  }

  /** Fails the stream after every event published so far. */
  void fail(Throwable cause) {
    flush();
    queue.fail(cause);
  }

  private void flush() {
    if (held.isEmpty()) {
      return;
    }
    List<HubEvent> out = held;
    held = new ArrayList<>();
    queue.offer(new Batch(out));
  }
}
