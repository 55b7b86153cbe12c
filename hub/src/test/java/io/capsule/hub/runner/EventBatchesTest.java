package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.ws.OrderedQueue;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The brain's events enter the event stream a write's effects at a time: one element for what they
 * published, in order, and an event published outside them at once, alone.
 */
class EventBatchesTest {
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void whatAWritesEffectsPublishEntersTheStreamAsOneElementInOrder() throws Exception {
    Pair<OrderedQueue<EventBatches.Batch>, Source<EventBatches.Batch, NotUsed>> q =
        OrderedQueue.broadcast(
            EventBatches.Batch.class, 16, Materializer.matFromSystem(kit.system()));
    BlockingQueue<List<String>> seen = new LinkedBlockingQueue<>();
    q.second()
        .map(b -> b.events().stream().map(e -> ((HubEvent.RunnerDown) e).reason()).toList())
        .runWith(Sink.foreach(seen::add), kit.system());
    EventBatches events = new EventBatches(q.first());
    attached(events, seen);

    events.offer(down("a"));
    boolean result =
        events.holding(
            () -> {
              events.offer(down("b"));
              events.offer(down("c"));
              events.offer(down("d"));
              return true;
            });
    events.offer(down("e"));

    assertEquals(true, result);
    assertEquals(List.of("a"), next(seen));
    assertEquals(List.of("b", "c", "d"), next(seen));
    assertEquals(List.of("e"), next(seen));
  }

  @Test
  void theStreamsConsumersSeeEveryEventOneByOneAndAFailureAfterThem() throws Exception {
    Pair<EventBatches, Source<HubEvent, NotUsed>> q =
        EventBatches.broadcast(16, Materializer.matFromSystem(kit.system()));
    BlockingQueue<List<String>> seen = new LinkedBlockingQueue<>();
    q.second()
        .map(e -> List.of(((HubEvent.RunnerDown) e).reason()))
        .recover(IllegalStateException.class, () -> List.of("failed"))
        .runWith(Sink.foreach(seen::add), kit.system());
    EventBatches events = q.first();
    attached(events, seen);
    events.holding(
        () -> {
          events.offer(down("a"));
          events.offer(down("b"));
          events.fail(new IllegalStateException("the journal failed"));
          return null;
        });

    assertEquals(List.of("a"), next(seen));
    assertEquals(List.of("b"), next(seen));
    assertEquals(List.of("failed"), next(seen));
  }

  /** The consumer is attached once an event offered now reaches it (a later one would too). */
  private static void attached(EventBatches events, BlockingQueue<List<String>> seen)
      throws InterruptedException {
    events.offer(down("attached"));
    assertEquals(List.of("attached"), next(seen));
  }

  private static List<String> next(BlockingQueue<List<String>> seen) throws InterruptedException {
    List<String> n = seen.poll(10, TimeUnit.SECONDS);
    if (n == null) {
      throw new AssertionError("nothing reached the consumer within 10 s");
    }
    return n;
  }

  private static HubEvent down(String why) {
    return new HubEvent.RunnerDown(new RunnerKey("p", "r"), why);
  }
}
