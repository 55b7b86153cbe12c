package io.capsule.protocol.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OrderedQueueTest {
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void offersEnterTheStreamInCallOrderThroughASmallBuffer() throws Exception {
    Pair<SourceQueueWithComplete<Integer>, Source<Integer, NotUsed>> q =
        Source.<Integer>queue(2, OverflowStrategy.backpressure())
            .preMaterialize(Materializer.matFromSystem(kit.system()));
    OrderedQueue<Integer> ordered = new OrderedQueue<>(q.first());
    for (int i = 0; i < 1000; i++) {
      ordered.offer(i);
    }
    ordered.complete();
    List<Integer> got =
        q.second()
            .runWith(Sink.seq(), kit.system())
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    assertEquals(1000, got.size());
    assertEquals(IntStream.range(0, 1000).boxed().toList(), got);
  }
}
