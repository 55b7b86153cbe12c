package io.capsule.hub.metrics;

import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The hub's meters, fed by its events ({@link #on(HubEvent)}) and read through gauges. Registered
 * on the {@link MeterRegistry} the caller passes in (never Micrometer's global one), so an embedder
 * sees them in its own registry and two hubs in one JVM never share counters.
 *
 * <p>Names follow Micrometer's dotted convention ({@code capsule.hub.runs.finished}); the
 * Prometheus registry renders them as {@code capsule_hub_runs_finished_total}. Tags are low
 * cardinality: outcomes, failure kinds, progress kinds, token kinds and capsule names, never a task
 * id or a runner id (runners come and go; a series per runner would grow without bound).
 *
 * <p>Threading: {@link #on} is called from the hub's one event consumer; gauges are read on the
 * scraping thread, so their suppliers must be thread-safe.
 */
public final class HubMetrics implements QueueWatch {
  /**
   * What a tag value may look like when it comes from a runner (an open string in the protocol).
   * Anything else is counted as {@code other}: a runner must not mint new series at will.
   */
  private static final Pattern TAG_VALUE = Pattern.compile("[A-Za-z0-9_.:-]{1,48}");

  /** Progress kinds the runtime sends (runner-protocol.md); any other kind is {@code other}. */
  private static final Set<String> KINDS =
      Set.of(
          "state",
          "text",
          "thinking",
          "tool",
          "usage",
          "quota",
          "suggested_prompt",
          "note",
          "retry");

  private final MeterRegistry registry;
  private final Function<String, String> capsuleOf;
  private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
  private final java.util.Map<String, Counter> appliedByKind = new ConcurrentHashMap<>();

  /**
   * @param capsuleOf the capsule a task id runs (for the tokens' {@code capsule} tag); must be
   *     thread-safe
   */
  public HubMetrics(MeterRegistry registry, Function<String, String> capsuleOf) {
    this.registry = registry;
    this.capsuleOf = capsuleOf;
    Gauge.builder("capsule.hub.runs.in.flight", inFlight, Set::size)
        .description("tasks that sent progress and have no report yet")
        .register(registry);
  }

  /** Gauges over the hub's live state: connected runners and queued tasks. */
  public HubMetrics watch(Supplier<Number> runnersConnected, Supplier<Number> queued) {
    Gauge.builder("capsule.hub.runners.connected", runnersConnected)
        .description("runners with an open connection to this hub")
        .register(registry);
    Gauge.builder("capsule.hub.queue.depth", queued)
        .description("tasks waiting in the project's queue for a runner")
        .register(registry);
    return this;
  }

  /**
   * Meters over the hub's wire counts: frames sent and replayed to runners, held bytes, journal
   * writes.
   */
  public HubMetrics traffic(HubTraffic traffic) {
    FunctionCounter.builder("capsule.hub.frames.sent", traffic, HubTraffic::sentCount)
        .description("task.assign and task.cancel frames numbered for runners")
        .register(registry);
    FunctionCounter.builder("capsule.hub.frames.replayed", traffic, HubTraffic::replayedCount)
        .description("frames sent again to a runner whose hello did not list them as received")
        .register(registry);
    Gauge.builder("capsule.hub.held.frames", traffic, HubTraffic::heldBytes)
        .description("bytes of out-of-order runner frames held until their gap fills")
        .baseUnit("bytes")
        .register(registry);
    FunctionCounter.builder("capsule.hub.journal.writes", traffic, HubTraffic::journalWriteCount)
        .description("writes to the hub's journal; each carries every entry that arrived meanwhile")
        .register(registry);
    FunctionCounter.builder("capsule.hub.journal.entries", traffic, HubTraffic::journalEntryCount)
        .description("entries written to the hub's journal (entries / writes: the batch size)")
        .register(registry);
    Gauge.builder("capsule.hub.journal.pending", traffic, HubTraffic::journalPendingCount)
        .description("journal entries waiting for the store; their effects wait with them")
        .register(registry);
    return this;
  }

  @Override
  public void placed(String taskId, String runner, Instant since) {
    Timer.builder("capsule.hub.queue.wait")
        .description("time from a task's submission to its placement on a runner")
        .publishPercentileHistogram()
        .maximumExpectedValue(Duration.ofHours(1))
        .register(registry)
        .record(Duration.between(since, Instant.now()).abs()); // abs: a clock stepped back
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** One hub event, as it happened. */
  public void on(HubEvent event) {
    if (event instanceof HubEvent.RunnerUp) {
      connections("up").increment();
    } else if (event instanceof HubEvent.RunnerDown) {
      connections("down").increment();
    } else if (event instanceof HubEvent.Progress p) {
      if (inFlight.add(p.progress().taskId())) {
        Counter.builder("capsule.hub.runs.started")
            .description("tasks whose first progress reached the hub")
            .register(registry)
            .increment();
      }
      applied(KINDS.contains(p.progress().kind()) ? p.progress().kind() : "other").increment();
    } else if (event instanceof HubEvent.Report r) {
      onReport(r.report().taskId(), r.report().report());
    } else if (event instanceof HubEvent.Refused f) {
      Counter.builder("capsule.hub.frames.refused")
          .description("runner frames or connections the hub refused, by code")
          .tag("code", f.diagnostic().code().id())
          .register(registry)
          .increment();
    }
  }

  /**
   * The applied-frames counter of {@code kind} (one of a few): looked up in the registry once, not
   * for every frame (a builder, its tags and the registry's lookup cost more than the increment).
   */
  private Counter applied(String kind) {
    return appliedByKind.computeIfAbsent(
        kind,
        k ->
            Counter.builder("capsule.hub.frames.applied")
                .description("runner frames applied, by progress kind (reports count as report)")
                .tag("kind", k)
                .register(registry));
  }

  private void onReport(String taskId, TaskReportBody report) {
    inFlight.remove(taskId);
    applied("report").increment();
    Counter.builder("capsule.hub.runs.finished")
        .description("tasks whose report reached the hub, by outcome and failure kind")
        .tag("outcome", tagValue(report.status()))
        .tag("failure", report.failureType().map(HubMetrics::failureKind).orElse("none"))
        .register(registry)
        .increment();
    UsageSplit u = report.usage();
    String capsule = tagValue(capsuleOf.apply(taskId));
    tokens("fresh_input", capsule, u.freshInput());
    tokens("cache_read", capsule, u.cacheRead());
    tokens("cache_write", capsule, u.cacheWrite());
    tokens("output", capsule, u.output());
    tokens("thinking", capsule, u.thinking());
  }

  private void tokens(String kind, String capsule, long amount) {
    Counter.builder("capsule.hub.tokens")
        .description("tokens spent by finished tasks, by kind and capsule (from their reports)")
        .baseUnit("tokens")
        .tag("kind", kind)
        .tag("capsule", capsule)
        .register(registry)
        .increment(amount);
  }

  private Counter connections(String event) {
    return Counter.builder("capsule.hub.runner.connections")
        .description(
            "runner connections opened (up) and ended (down); up beyond runners = reconnects")
        .tag("event", event)
        .register(registry);
  }

  /**
   * {@code canceled}, or a runtime code with its kind ({@code E-RUN-033:quota}): the code and kind
   * come from a closed catalog, so the series stay few.
   */
  static String failureKind(String failureType) {
    return tagValue(failureType);
  }

  static String tagValue(String s) {
    return s != null && TAG_VALUE.matcher(s).matches() ? s : "other";
  }
}
