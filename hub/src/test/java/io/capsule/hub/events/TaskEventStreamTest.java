package io.capsule.hub.events;

import static io.capsule.hub.events.EventOrderTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.sse.ServerSentEvent;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One watcher's stream, built from a journal feed and a live push: merged without gap or repeat,
 * ended by the report; a watcher that falls behind gets a last {@code error} event with its code
 * and the id to resume after, instead of growing a buffer; a quiet stream sends comment lines; the
 * live push is unsubscribed however the stream ends.
 */
class TaskEventStreamTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(20);
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  /** A live push that hands {@code pushed} to the watcher the moment it subscribes. */
  private static final class Push implements LocalFeed {
    final CountDownLatch canceled = new CountDownLatch(1);
    private final List<TaskEntry> pushed;

    Push(List<TaskEntry> pushed) {
      this.pushed = pushed;
    }

    @Override
    public Subscription subscribe(Consumer<TaskEntry> live) {
      pushed.forEach(live);
      return new Subscription(List.of(), canceled::countDown);
    }
  }

  private List<ServerSentEvent> run(Source<ServerSentEvent, ?> s) throws Exception {
    return s.runWith(Sink.seq(), kit.system())
        .toCompletableFuture()
        .get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  private static List<String> ids(List<ServerSentEvent> events) {
    return events.stream()
        .map(e -> e.getId().orElse("-") + (e.getEventType().orElse("").equals("report") ? "r" : ""))
        .toList();
  }

  @Test
  void pushedEventsAheadOfTheJournalWaitForItAndTheReportEndsTheStream() throws Exception {
    Source<TaskEntry, org.apache.pekko.NotUsed> journal =
        Source.from(List.of(entry("1"), entry("2")))
            .concat(
                Source.<TaskEntry>maybe()
                    .mapMaterializedValue(m -> org.apache.pekko.NotUsed.getInstance()));
    Push push = new Push(List.of(entry("2"), entry("3"), entry("4r"), entry("5")));
    List<ServerSentEvent> out =
        run(
            TaskEventStream.of(
                kit.system(), journal, push, 0, new TaskEventStream.Settings(WAIT, 16)));
    assertEquals(List.of("1", "2", "3", "4r"), ids(out));
    assertTrue(push.canceled.await(WAIT.toSeconds(), TimeUnit.SECONDS), "unsubscribed");
  }

  @Test
  void aPushAfterTheWatcherLeftIsDroppedQuietly() throws Exception {
    // The push reaches a watcher whose stream has just ended (its report read, its socket gone):
    // it used to fail the closed queue, which threw into the node's live-push actor and stopped it,
    // so every watcher on that node lost its live push (HubClusterKillTest's logs, after a
    // failover).
    java.util.concurrent.atomic.AtomicReference<Consumer<TaskEntry>> held =
        new java.util.concurrent.atomic.AtomicReference<>();
    LocalFeed keeps =
        live -> {
          held.set(live);
          return new LocalFeed.Subscription(List.of(), () -> {});
        };
    List<ServerSentEvent> out =
        run(
            TaskEventStream.of(
                kit.system(),
                Source.from(List.of(entry("1"), entry("2r"))),
                keeps,
                0,
                new TaskEventStream.Settings(WAIT, 16)));
    assertEquals(List.of("1", "2r"), ids(out));
    held.get().accept(entry("3")); // must not throw
    held.get().accept(entry("4"));
  }

  @Test
  void resumesAfterLastEventIdFromTheJournalAlone() throws Exception {
    Source<TaskEntry, org.apache.pekko.NotUsed> journal =
        Source.from(List.of(entry("1"), entry("2"), entry("3"), entry("4r")));
    List<ServerSentEvent> out =
        run(
            TaskEventStream.of(
                kit.system(),
                journal,
                LocalFeed.none(),
                2,
                new TaskEventStream.Settings(WAIT, 16)));
    assertEquals(List.of("3", "4r"), ids(out));
  }

  @Test
  void aWatcherThatFallsBehindGetsItsCodeAndWhereToResumeNotAGrowingBuffer() throws Exception {
    // 40 events pushed before the watcher read any, through a buffer of 8: the queue refuses the
    // ninth, and the watcher's stream ends with the error event instead of holding all 40.
    List<TaskEntry> many =
        java.util.stream.IntStream.rangeClosed(1, 40).mapToObj(i -> entry("" + i)).toList();
    Push push = new Push(many);
    List<ServerSentEvent> out =
        run(
            TaskEventStream.of(
                kit.system(),
                Source.<TaskEntry>maybe()
                    .mapMaterializedValue(m -> org.apache.pekko.NotUsed.getInstance()),
                push,
                0,
                new TaskEventStream.Settings(WAIT, 8)));
    ServerSentEvent last = out.get(out.size() - 1);
    assertEquals("error", last.getEventType().orElse(""), out.toString());
    JsonNode data = JSON.readTree(last.getData());
    assertEquals("E-API-007", data.get("code").asText(), last.getData());
    assertTrue(data.get("hint").asText().contains("Last-Event-ID"), last.getData());
    assertTrue(out.size() <= 9, "at most the buffer and the error: " + ids(out));
    assertEquals(out.size() - 1, data.get("last_event_id").asLong(), "the last id it was sent");
    assertTrue(push.canceled.await(WAIT.toSeconds(), TimeUnit.SECONDS), "unsubscribed");
  }

  @Test
  void eventsThatWaitTooLongForAGapEndTheWatcherTheSameWay() throws Exception {
    // Event 1 never comes (the journal is slow): 2..12 wait, past the bound of 4 it is an error.
    List<TaskEntry> ahead =
        java.util.stream.IntStream.rangeClosed(2, 12).mapToObj(i -> entry("" + i)).toList();
    List<ServerSentEvent> out =
        run(
            TaskEventStream.of(
                kit.system(),
                Source.<TaskEntry>maybe()
                    .mapMaterializedValue(m -> org.apache.pekko.NotUsed.getInstance()),
                new Push(ahead),
                0,
                new TaskEventStream.Settings(WAIT, 4)));
    assertEquals(1, out.size(), ids(out).toString());
    JsonNode data = JSON.readTree(out.get(0).getData());
    assertEquals("E-API-007", data.get("code").asText());
    assertEquals(0, data.get("last_event_id").asLong());
  }

  @Test
  void aQuietStreamSendsCommentLinesAtTheKeepAliveInterval() throws Exception {
    Push push = new Push(List.of());
    List<ServerSentEvent> out =
        run(
            TaskEventStream.of(
                    kit.system(),
                    Source.<TaskEntry>maybe()
                        .mapMaterializedValue(m -> org.apache.pekko.NotUsed.getInstance()),
                    push,
                    0,
                    new TaskEventStream.Settings(Duration.ofMillis(50), 8))
                .take(2));
    assertEquals(List.of(ServerSentEvent.heartbeat(), ServerSentEvent.heartbeat()), out);
    assertTrue(push.canceled.await(WAIT.toSeconds(), TimeUnit.SECONDS), "unsubscribed");
  }
}
