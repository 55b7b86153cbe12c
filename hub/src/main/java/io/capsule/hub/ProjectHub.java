package io.capsule.hub;

import static org.apache.pekko.http.javadsl.server.Directives.concat;

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
import io.capsule.protocol.token.ProjectTokens;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * One project's hub state, the brain: the runners' sequencing and connections ({@link HubServer}'s
 * actor), the tasks ({@link TaskBook}), the queue ({@link TaskQueue}), the runner roll, and the
 * task API's logic ({@link HubApi}) over them. Built once where the project's {@link HubBrain}
 * runs, from what the journal and the queue's store hold (as a restarted hub restores); everything
 * that reaches it from outside arrives through that actor as serializable messages.
 */
final class ProjectHub {
  /**
   * Everything a node needs to build a project's brain: the same on every node.
   *
   * @param settings the HTTP side's configuration ({@code capsule.hub.*}): the brain's node may run
   *     the store in another actor system (tests), and the hub's settings are the HTTP side's
   * @param built told on this node each time a brain is built here (or failed to be)
   */
  record Deps(
      ProtocolConfig config,
      ProjectTokens tokens,
      LiveFeed live,
      Optional<JdbcReadJournal> reads,
      Duration storeTimeout,
      com.typesafe.config.Config settings,
      java.util.function.BiConsumer<ProjectHub, Throwable> built,
      Optional<MeterRegistry> registry) {}

  final HubServer hub;
  final TaskBook book;
  final TaskQueue queue;
  final HubApi api;
  final HubWeb web;
  final CompletionStage<Done> events;
  private final Optional<Cancellable> retention;

  private ProjectHub(
      HubServer hub,
      TaskBook book,
      TaskQueue queue,
      HubApi api,
      HubWeb web,
      CompletionStage<Done> events,
      Optional<Cancellable> retention) {
    this.hub = hub;
    this.book = book;
    this.queue = queue;
    this.api = api;
    this.web = web;
    this.events = events;
    this.retention = retention;
  }

  /**
   * What the brain restores from, read from the store (blocking: call it off the actor threads).
   */
  record Restored(HubJournal journal, QueueStore queueStore) {}

  static Restored read(ActorSystem<?> system, String projectId, HubJournal journal, Duration wait) {
    // The queue is kept where the tasks are: in the store of a PersistentHubJournal, else nowhere
    // (a hub without a store forgets everything on restart anyway).
    QueueStore store =
        journal instanceof PersistentHubJournal p
            ? PersistentQueueStore.open(p.system(), projectId, wait)
            : QueueStore.none();
    return new Restored(journal, store);
  }

  /**
   * Builds the brain from {@code restored}, its actor a child of {@code parent}.
   *
   * @throws io.capsule.protocol.ProtocolException {@code E-PRO-010} when the journal does not
   *     replay
   */
  static ProjectHub build(ActorContext<?> parent, String projectId, Deps deps, Restored restored) {
    ActorSystem<?> system = parent.getSystem();
    HubJournal journal = restored.journal();
    TaskBook book = new TaskBook(!(journal instanceof PersistentHubJournal));
    journal.restorable().forEach(book::replay);
    // After the restore: watchers read history from the journal, the push is for what is new.
    book.publishTo((taskId, entry) -> deps.live().publish(taskId, entry));
    // The brain may have moved here: its tasks' watchers on other nodes asked the old one.
    book.pushAll();
    HubServer hub = HubServer.createIn(parent, deps.config(), deps.tokens(), journal);
    var settings = deps.settings().getConfig("capsule.hub");
    TaskQueue queue =
        new TaskQueue(
            hub,
            book,
            projectId,
            settings.getInt("queue-max"),
            settings.getDuration("queue-retry-after"),
            restored.queueStore(),
            deps.config().frameCapBytes());
    queue.restore(restored.queueStore().recorded()); // before any runner's hello can drain it
    HubWeb web = web(system, hub, book, projectId, deps.registry()); // /metrics, the page
    HubEventLog steps = new HubEventLog();
    queue.watch(QueueWatch.all(List.of(web.metrics(), steps))); // queue wait time, log lines
    RunnerRoll roll =
        new RunnerRoll(java.time.Clock.systemUTC(), settings.getDuration("runner-age-out"));
    CompletionStage<Done> events =
        hub.events()
            .runWith(Sink.foreach(e -> record(book, queue, roll, e, web.metrics(), steps)), system);
    HubApi api = new HubApi(hub, book, deps.tokens(), projectId, queue, roll, deps.reads());
    Optional<Cancellable> sweeps = retention(system, settings.getDuration("retention"), queue);
    return new ProjectHub(hub, book, queue, api, web, events, sweeps);
  }

  /** The routes the brain answers for every node: the task API and the page and metrics. */
  Route route() {
    return concat(api.route(), web.route());
  }

  void stop() {
    retention.ifPresent(Cancellable::cancel);
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
   * The hub's meters on {@code embedders}' registry when an embedder passed one (never a global
   * one; {@code /metrics} then answers 404), else on a Prometheus registry of the hub's own, served
   * at {@code /metrics}.
   */
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
    } else if (e instanceof HubEvent.Reclaimed r) {
      queue.reclaim(r.runner(), r.taskIds()); // gone past dead-after: placed again
    }
  }
}
