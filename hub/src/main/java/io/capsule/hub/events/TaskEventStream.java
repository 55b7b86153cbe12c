package io.capsule.hub.events;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.task.TaskEvent;
import io.capsule.hub.task.TaskRow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.sse.ServerSentEvent;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.javadsl.CurrentEventsByPersistenceIdQuery;
import org.apache.pekko.persistence.query.javadsl.EventsByPersistenceIdQuery;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.javadsl.Source;

/**
 * One watcher's server-sent events of one task: the journal's events (history, then the live query
 * that polls the store) merged with this node's {@link LocalFeed live push}, put in order by {@link
 * EventOrder}, ended by the report.
 *
 * <p>Bounded per watcher: the journal side is pulled (a slow watcher slows its own query, nothing
 * piles up); the live push goes through a queue of {@code buffer} events, and at most {@code
 * buffer} events wait for a gap to fill. Past either, the watcher gets a last {@code event: error}
 * ({@code E-API-007}, with the last id it was sent) and the stream ends: it reconnects with {@code
 * Last-Event-ID} and resumes from the journal. While nothing happens a comment line ({@code :})
 * goes out every {@code keepAlive}, well under the server's idle timeout.
 */
public final class TaskEventStream {

  /** How a watcher's stream is kept alive and bounded (see {@code capsule.hub.sse}). */
  public record Settings(Duration keepAlive, int buffer) {
    public Settings {
      if (keepAlive.isNegative() || keepAlive.isZero() || buffer < 1) {
        throw new IllegalArgumentException(
            "capsule.hub.sse: keepalive > 0 and buffer >= 1, not " + keepAlive + ", " + buffer);
      }
    }
  }

  /** Ends a watcher that fell behind; turned into its last event. */
  private static final class Behind extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Behind(String why) {
      super(why, null, false, false);
    }
  }

  private TaskEventStream() {}

  /**
   * The applied events a task entity's journal holds, then (live) every later one as the store's
   * poll finds it; never completes by itself.
   */
  public static Source<TaskEntry, NotUsed> journal(EventsByPersistenceIdQuery query, String pid) {
    return entries(query.eventsByPersistenceId(pid, 0L, Long.MAX_VALUE));
  }

  /** What the journal holds now for {@code pid}, then completes: to ask whether a task exists. */
  public static Source<TaskEntry, NotUsed> current(
      CurrentEventsByPersistenceIdQuery query, String pid) {
    return entries(query.currentEventsByPersistenceId(pid, 0L, Long.MAX_VALUE));
  }

  /** Read from the task's first event: the ids of a later placement count on from the last. */
  private static Source<TaskEntry, NotUsed> entries(Source<EventEnvelope, NotUsed> events) {
    return events
        .map(EventEnvelope::event)
        .filter(TaskRow.class::isInstance)
        .statefulMapConcat(
            () -> {
              EventIds ids = new EventIds();
              return e -> {
                List<TaskEntry> out = new ArrayList<>();
                for (TaskEvent t : ((TaskRow) e).events()) {
                  ids.next(t).ifPresent(out::add);
                }
                return out;
              };
            });
  }

  /**
   * The watcher's stream: events after {@code after} from {@code journal} and {@code local}, in id
   * order, once each, up to and with the report. Subscribes to {@code local} when the stream runs
   * and unsubscribes when it ends, however it ends.
   */
  public static Source<ServerSentEvent, NotUsed> of(
      ActorSystem<?> system,
      Source<TaskEntry, NotUsed> journal,
      LocalFeed local,
      long after,
      Settings settings) {
    return Source.lazySource(() -> running(system, journal, local, after, settings))
        .mapMaterializedValue(m -> NotUsed.getInstance());
  }

  private static Source<ServerSentEvent, NotUsed> running(
      ActorSystem<?> system,
      Source<TaskEntry, NotUsed> journal,
      LocalFeed local,
      long after,
      Settings settings) {
    Pair<BoundedSourceQueue<TaskEntry>, Source<TaskEntry, NotUsed>> live =
        Source.<TaskEntry>queue(settings.buffer()).preMaterialize(system);
    BoundedSourceQueue<TaskEntry> queue = live.first();
    AtomicBoolean failed = new AtomicBoolean();
    LocalFeed.Subscription sub =
        local.subscribe(
            e -> {
              QueueOfferResult offered = queue.offer(e);
              if (offered != QueueOfferResult.dropped()) {
                return; // enqueued, or the watcher's stream has ended: nothing to tell it
              }
              if (failed.compareAndSet(false, true)) {
                queue.fail(
                    new Behind(
                        "more than "
                            + settings.buffer()
                            + " events arrived while the watcher read none (capsule.hub.sse.buffer)"));
              }
            });
    EventOrder order = new EventOrder(after, settings.buffer());
    return Source.from(sub.history())
        .concat(live.second())
        .merge(journal)
        .mapConcat(
            e -> {
              EventOrder.Step step = order.offer(e);
              if (step.overflow()) {
                throw new Behind(
                    "more than "
                        + settings.buffer()
                        + " events waited for an earlier one (capsule.hub.sse.buffer)");
              }
              return step.send();
            })
        .takeWhile(e -> !e.isReport(), true)
        .map(TaskEventStream::event)
        .recover(
            new PFBuilder<Throwable, ServerSentEvent>()
                .match(Behind.class, b -> behind(b, order.last()))
                .build())
        .keepAlive(settings.keepAlive(), ServerSentEvent::heartbeat)
        .watchTermination(
            (mat, done) -> {
              done.whenComplete((d, t) -> sub.cancel().run());
              return mat;
            });
  }

  private static ServerSentEvent event(TaskEntry e) {
    return ServerSentEvent.create(e.data().toString(), e.event(), Long.toString(e.id()));
  }

  /** The watcher's last event: what happened, the id to resume after, what to do. */
  private static ServerSentEvent behind(Behind b, long last) {
    Diagnostic d = Diagnostic.of(Code.E_API_007, "the watcher fell behind: " + b.getMessage());
    ObjectNode data = JsonNodeFactory.instance.objectNode();
    data.put("error", d.toString());
    data.put("code", d.code().id());
    data.put("hint", d.hint());
    data.put("last_event_id", last);
    return ServerSentEvent.create(data.toString(), "error");
  }
}
