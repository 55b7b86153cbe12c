package io.capsule.hub;

import static org.apache.pekko.http.javadsl.server.Directives.concat;

import com.typesafe.config.Config;
import io.capsule.hub.events.TaskEventStream;
import io.capsule.hub.http.GuardedBinding;
import io.capsule.hub.metrics.HubEventLog;
import io.capsule.hub.metrics.HubMetrics;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.hub.metrics.QueueWatch;
import io.capsule.hub.queue.PersistentQueueStore;
import io.capsule.hub.queue.QueueStore;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RunnerInfo;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.hub.web.HubWeb;
import io.capsule.hub.web.Readiness;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.token.ProjectTokens;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * {@code capsule hub}: the protocol's hub endpoint ({@code /v1/runner}) and the task API ({@link
 * HubApi}) on one listening address, with the hub's events recorded in a {@link TaskBook}.
 *
 * <p>With a {@link HubJournal} the hub survives its own restart: the journal holds every task's
 * assignment, cancel and applied progress, so a new hub on it rebuilds the task book (state,
 * events, reports: the SSE ids go on where they stopped) and the protocol's sequencing (runners
 * resume; nothing is lost or applied twice).
 */
public final class ReferenceHub {
  /** As the hub's journal waits for its store: long enough for a busy database, still bounded. */
  private static final Duration STORE_TIMEOUT = Duration.ofSeconds(20);

  private final HubServer hub;
  private final GuardedBinding binding;
  private final CompletionStage<Done> events;
  private final Optional<Cancellable> retention;

  private ReferenceHub(
      HubServer hub,
      GuardedBinding binding,
      CompletionStage<Done> events,
      Optional<Cancellable> retention) {
    this.hub = hub;
    this.binding = binding;
    this.events = events;
    this.retention = retention;
  }

  /** Binds on {@code host:port} (port 0: a free one) for {@code projectId}; remembers nothing. */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port) {
    return start(system, config, tokens, projectId, host, port, HubJournal.none());
  }

  /**
   * Binds on {@code host:port} for {@code projectId}, starting from what {@code journal} recorded
   * and recording into it. The caller closes the journal after {@link #stop()}.
   *
   * @throws io.capsule.protocol.ProtocolException {@code E-PRO-010} when the journal does not
   *     replay
   */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port,
      HubJournal journal) {
    return start(system, config, tokens, projectId, host, port, journal, Optional.empty());
  }

  /**
   * As {@link #start(ActorSystem, ProtocolConfig, ProjectTokens, String, String, int, HubJournal)},
   * with the hub's meters registered on {@code registry} (an embedder's own; never a global one):
   * the embedder exposes them as it likes, and this hub's {@code /metrics} answers 404. Empty: a
   * Prometheus registry of the hub's own, served at {@code /metrics}.
   */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port,
      HubJournal journal,
      Optional<MeterRegistry> registry) {
    TaskBook book = new TaskBook(!(journal instanceof PersistentHubJournal));
    journal.recorded().forEach(entry -> restore(book, entry));
    HubServer hub = HubServer.create(system, config, tokens, journal);
    var settings = system.settings().config().getConfig("capsule.hub");
    QueueStore queueStore = queueStore(journal, projectId);
    TaskQueue queue =
        new TaskQueue(
            hub,
            book,
            projectId,
            settings.getInt("queue-max"),
            settings.getDuration("queue-retry-after"),
            queueStore);
    queue.restore(queueStore.recorded()); // before any runner's hello can drain it
    HubWeb web = web(system, hub, book, projectId, registry); // /healthz, /readyz, /metrics, page
    HubEventLog steps = new HubEventLog();
    queue.watch(QueueWatch.all(List.of(web.metrics(), steps))); // queue wait time, log lines
    RunnerRoll roll =
        new RunnerRoll(java.time.Clock.systemUTC(), settings.getDuration("runner-age-out"));
    CompletionStage<Done> events =
        hub.events()
            .runWith(Sink.foreach(e -> record(book, queue, roll, e, web.metrics(), steps)), system);
    HubApi api =
        new HubApi(
            system,
            hub,
            book,
            tokens,
            projectId,
            queue,
            roll,
            reads(journal),
            sseSettings(system.settings().config()));
    Optional<Cancellable> sweeps = retention(system, settings.getDuration("retention"), queue);
    // The guarded edge, not a plain binding: slow or idle connections must not lock runners out
    // (capsule.hub.http.*: a header deadline, per-address and total caps).
    return GuardedBinding.bind(
            system,
            host,
            port,
            concat(hub.route(), api.route(), web.route()),
            GuardedBinding.Limits.fromConfig(system.settings().config()))
        .thenApply(b -> new ReferenceHub(hub, b, events, sweeps));
  }

  /**
   * Forgets finished tasks older than {@code keep} (0: never), checking every half of it, at least
   * every minute and at most every second: a task outlives its retention by at most that interval.
   */
  private static Optional<Cancellable> retention(
      ActorSystem<?> system, Duration keep, TaskQueue queue) {
    if (keep.isNegative()) {
      throw new IllegalArgumentException("capsule.hub.retention must be >= 0, not " + keep);
    }
    if (keep.isZero()) {
      return Optional.empty();
    }
    Duration every = keep.dividedBy(2);
    every = every.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : every;
    every = every.compareTo(Duration.ofMinutes(1)) > 0 ? Duration.ofMinutes(1) : every;
    return Optional.of(
        system
            .scheduler()
            .scheduleWithFixedDelay(
                every,
                every,
                () -> queue.sweep(java.time.Instant.now().minus(keep)),
                system.executionContext()));
  }

  /**
   * The queue is kept where the tasks are: in the store of a {@link PersistentHubJournal}, else
   * nowhere (a hub without a store forgets everything on restart anyway).
   */
  private static QueueStore queueStore(HubJournal journal, String projectId) {
    return journal instanceof PersistentHubJournal p
        ? PersistentQueueStore.open(p.system(), projectId, STORE_TIMEOUT)
        : QueueStore.none();
  }

  private static HubWeb web(
      ActorSystem<?> system,
      HubServer hub,
      TaskBook book,
      String project,
      Optional<MeterRegistry> embedders) {
    Function<MeterRegistry, HubMetrics> meters =
        registry ->
            new HubMetrics(registry, id -> book.get(id).map(t -> t.capsule).orElse("unknown"))
                .watch(
                    () -> hub.runners(project).stream().filter(RunnerInfo::connected).count(),
                    () -> book.all().stream().filter(t -> "queued".equals(t.state())).count())
                .traffic(HubTraffic.get(system));
    return embedders
        .map(r -> HubWeb.withMetrics(Readiness.of(system), meters.apply(r)))
        .orElseGet(() -> HubWeb.withPrometheus(Readiness.of(system), meters::apply));
  }

  /** The store's read side, when the hub keeps its tasks in one. */
  private static Optional<JdbcReadJournal> reads(HubJournal journal) {
    return journal instanceof PersistentHubJournal p
        ? Optional.of(
            PersistenceQuery.get(p.system())
                .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier()))
        : Optional.empty();
  }

  /**
   * {@code capsule.hub.sse}; a keepalive that is not well under the HTTP idle timeout would let the
   * server close a quiet watcher's stream, so it is refused at start.
   */
  static TaskEventStream.Settings sseSettings(Config config) {
    Duration keepAlive = config.getDuration("capsule.hub.sse.keepalive");
    Duration idle = config.getDuration("capsule.hub.http.idle-timeout");
    if (keepAlive.multipliedBy(2).compareTo(idle) > 0) {
      throw new IllegalArgumentException(
          "capsule.hub.sse.keepalive ("
              + keepAlive
              + ") must be at most half of capsule.hub.http.idle-timeout ("
              + idle
              + "), or quiet event streams are closed as idle");
    }
    return new TaskEventStream.Settings(keepAlive, config.getInt("capsule.hub.sse.buffer"));
  }

  private static void record(
      TaskBook book,
      TaskQueue queue,
      RunnerRoll roll,
      HubEvent e,
      HubMetrics metrics,
      HubEventLog steps) {
    metrics.on(e);
    steps.on(e); // one INFO line per runner and task step
    if (e instanceof HubEvent.RunnerUp u) {
      roll.up(u.runner());
    } else if (e instanceof HubEvent.RunnerDown d) {
      roll.down(d.runner());
    }
    if (e instanceof HubEvent.Progress p) {
      book.progress(p.progress());
    } else if (e instanceof HubEvent.Report r) {
      book.report(r.report());
      queue.drain(); // a slot freed
    } else if (e instanceof HubEvent.RunnerUp) {
      queue.drain(); // a runner (maybe the one a queued task names) can take work
    }
  }

  /** One journal entry into the book, as if it had happened in this hub. */
  private static void restore(TaskBook book, HubJournal.Entry entry) {
    if (entry.frame() instanceof TaskAssign a) {
      String backend = a.invocation().backend();
      String capsule = backend.startsWith("capsule:") ? backend.substring(8) : backend;
      book.add(new TaskBook.Task(a.taskId(), capsule, entry.runner(), a.task().json()));
    } else if (entry.frame() instanceof TaskCancel c) {
      book.get(c.taskId()).ifPresent(TaskBook.Task::markCancelRequested);
    } else if (entry.frame() instanceof TaskProgress p) {
      book.progress(p);
    } else if (entry.frame() instanceof TaskReport r) {
      book.report(r);
    }
  }

  /**
   * Completes when the hub stops; fails when it stopped on its own because it could not keep its
   * journal ({@code E-PRO-010}).
   */
  public CompletionStage<Done> terminated() {
    return events;
  }

  public InetSocketAddress address() {
    return binding.localAddress();
  }

  /** {@code http://host:port} of the API. */
  public String apiUrl() {
    return "http://" + address().getHostString() + ":" + address().getPort();
  }

  /** {@code ws://host:port/v1/runner} for runners. */
  public String runnerUrl() {
    return "ws://" + address().getHostString() + ":" + address().getPort() + "/v1/runner";
  }

  public HubServer hub() {
    return hub;
  }

  public CompletionStage<Done> stop() {
    retention.ifPresent(Cancellable::cancel);
    return binding.terminate().thenCompose(t -> hub.close());
  }
}
