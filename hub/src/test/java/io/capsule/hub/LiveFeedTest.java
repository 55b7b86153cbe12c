package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.hub.events.TaskEntry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node's live push goes on for every watcher when one of them fails: the subscriber actor is the
 * push of every SSE watcher on the node, so a watcher that throws (a stream that ended under it, a
 * bug) must cost only its own events. Before the guard, the first throw stopped the actor and every
 * other watcher on the node fell back to the journal's poll.
 */
class LiveFeedTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aWatcherThatThrowsDoesNotStopThePushToTheOthers() {
    LiveFeed feed = LiveFeed.start(kit.system(), "p");
    AtomicInteger thrown = new AtomicInteger();
    // Listening in this order puts the failing watcher first in the task's list.
    LiveFeed.Early failing = feed.listen("t", 16);
    LiveFeed.Early healthy = feed.listen("t", 16);
    failing
        .with(List.of())
        .subscribe(
            e -> {
              thrown.incrementAndGet();
              throw new IllegalStateException("this watcher's stream has ended");
            });
    TestProbe<TaskEntry> heard = kit.createTestProbe();
    healthy.with(List.of()).subscribe(heard.ref()::tell);

    // The topic's subscription is registered asynchronously: publish until the push arrives.
    AtomicInteger next = new AtomicInteger();
    heard.awaitAssert(
        Duration.ofSeconds(10),
        Duration.ofMillis(100),
        () -> {
          feed.publish("t", entry(next.incrementAndGet()));
          return heard.expectMessageClass(TaskEntry.class, Duration.ofMillis(100));
        });
    int failedSoFar = thrown.get();

    // Every later push still reaches the healthy watcher, and the failing one is still tried.
    long last = 1_000;
    feed.publish("t", entry(last));
    assertEquals(
        last,
        heard
            .fishForMessage(
                Duration.ofSeconds(10),
                e ->
                    e.id() == last
                        ? FishingOutcomes.complete()
                        : FishingOutcomes.continueAndIgnore())
            .get(0)
            .id());
    assertEquals(true, thrown.get() > failedSoFar, "the failing watcher was offered the push too");
  }

  private static TaskEntry entry(long id) {
    return new TaskEntry(id, "text", JSON.createObjectNode().put("delta", "event " + id));
  }
}
