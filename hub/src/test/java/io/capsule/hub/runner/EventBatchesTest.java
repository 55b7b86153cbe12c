package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.ws.OrderedQueue;
import java.util.List;
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
    var seen = q.second().runWith(Sink.seq(), kit.system());
    EventBatches events = new EventBatches(q.first());

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
    events.complete();

    assertEquals(true, result);
    List<List<String>> batches =
        seen.toCompletableFuture().get(10, TimeUnit.SECONDS).stream()
            .map(b -> b.events().stream().map(e -> ((HubEvent.RunnerDown) e).reason()).toList())
            .toList();
    assertEquals(List.of(List.of("a"), List.of("b", "c", "d"), List.of("e")), batches);
  }

  @Test
  void theStreamsConsumersSeeEveryEventOneByOneAndAFailureAfterThem() throws Exception {
    Pair<EventBatches, Source<HubEvent, NotUsed>> q =
        EventBatches.broadcast(16, Materializer.matFromSystem(kit.system()));
    var seen =
        q.second()
            .map(e -> ((HubEvent.RunnerDown) e).reason())
            .recover(IllegalStateException.class, () -> "failed")
            .runWith(Sink.seq(), kit.system());
    EventBatches events = q.first();
    events.holding(
        () -> {
          events.offer(down("a"));
          events.offer(down("b"));
          events.fail(new IllegalStateException("the journal failed"));
          return null;
        });

    assertEquals(List.of("a", "b", "failed"), seen.toCompletableFuture().get(10, TimeUnit.SECONDS));
  }

  private static HubEvent down(String why) {
    return new HubEvent.RunnerDown(new RunnerKey("p", "r"), why);
  }
}
