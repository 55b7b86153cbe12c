package io.capsule.runtime.metrics;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.ws.RunnerTraffic;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;

/**
 * A run's meters, derived from its events as they are handed on ({@link #on(RunEvent)}), so the run
 * actor itself needs no metrics code: runs started, in flight and finished by outcome and failure
 * kind, their duration, time to the first output, tokens by kind, tool calls by tool and result,
 * retries.
 *
 * <p>Registered on the {@link MeterRegistry} it is built with (never Micrometer's global one). Tags
 * are low cardinality: no task ids; tool names and failure kinds only when they look like names
 * (else {@code other}).
 *
 * <p>Threading: {@link #on} is called from each run's session actor, several runs at once; the
 * per-task state is in concurrent maps and each task's events come from one actor, in order.
 */
public final class RunMeters {
  private static final Pattern TAG_VALUE = Pattern.compile("[A-Za-z0-9_.:/-]{1,48}");

  private final MeterRegistry registry;

  /** Tasks in flight: when each was accepted (registry clock, ns), and whether it spoke yet. */
  private final Map<String, long[]> open = new ConcurrentHashMap<>();

  /** Tool call id to tool name, between the call and its result. */
  private final Map<String, String> calls = new ConcurrentHashMap<>();

  /** The hub connections of this node (one per runner; summed when an embedder has several). */
  private final List<RunnerTraffic> links = new CopyOnWriteArrayList<>();

  public RunMeters(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("capsule.runner.runs.in.flight", open, Map::size)
        .description("runs accepted and not finished")
        .register(registry);
    traffic(
        "capsule.runner.frames.sent",
        "frames this runner sent to its hub (progress and reports)",
        RunnerTraffic::sent);
    traffic(
        "capsule.runner.frames.replayed",
        "frames written again after a reconnect (not acknowledged by the hub before)",
        RunnerTraffic::replayed);
    traffic(
        "capsule.runner.hub.reconnects",
        "times the runner's hub connection was ready again after it was lost",
        RunnerTraffic::reconnects);
  }

  private void traffic(String name, String description, ToLongFunction<RunnerTraffic> count) {
    FunctionCounter.builder(
            name, links, l -> l.stream().mapToLong(count).sum()) // read at each scrape
        .description(description)
        .register(registry);
  }

  /** Counts what {@code traffic}'s hub connection sends, replays and reconnects from now on. */
  public void watch(RunnerTraffic traffic) {
    links.add(traffic);
  }

  /**
   * One driver call, however it ended.
   *
   * @param function the WIT function ({@code launch}, {@code parse}, {@code classify-exit})
   * @param engine {@code wasmtime}, {@code chicory} or {@code java} ({@link DriverEngines})
   */
  public void driverCall(String function, String engine, long nanos) {
    Timer.builder("capsule.runner.driver.calls")
        .description("driver calls on the blocking dispatcher, by WIT function and engine")
        .tag("function", tagValue(function))
        .tag("engine", tagValue(engine))
        .publishPercentileHistogram()
        .maximumExpectedValue(Duration.ofSeconds(30)) // the default call deadline
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** One harness spawn (sandbox decision included), from its start until the process or refusal. */
  public void harnessSpawn(boolean started, long nanos) {
    Timer.builder("capsule.runner.harness.spawn")
        .description("time to start a harness process group, by result")
        .tag("result", started ? "started" : "failed")
        .publishPercentileHistogram()
        .maximumExpectedValue(Duration.ofSeconds(30))
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** One connection the containment's egress proxy refused (a host outside the allowlist). */
  public void egressRefused() {
    Counter.builder("capsule.runner.egress.refused")
        .description("connections the contained harness's egress proxy refused")
        .register(registry)
        .increment();
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** One event of one run, in the order the run produced it. */
  public void on(RunEvent event) {
    if (event instanceof RunEvent.Finished f) {
      finished(f.outcome());
      return;
    }
    String task = event.taskId();
    if (open.putIfAbsent(task, new long[] {registry.config().clock().monotonicTime(), 0}) == null) {
      Counter.builder("capsule.runner.runs.started")
          .description("runs accepted by this runner")
          .register(registry)
          .increment();
    }
    if (event instanceof RunEvent.TextDelta
        || event instanceof RunEvent.ThinkingDelta
        || event instanceof RunEvent.TextCompleted
        || event instanceof RunEvent.ToolStarted
        || event instanceof RunEvent.ToolCalled) {
      firstOutput(task);
    }
    if (event instanceof RunEvent.ToolCalled c) {
      calls.put(task + "\u0000" + c.callId(), tagValue(c.name()));
    } else if (event instanceof RunEvent.ToolResulted r) {
      String tool = calls.remove(task + "\u0000" + r.callId());
      Counter.builder("capsule.runner.tool.calls")
          .description("tool calls that got a result, by tool and result")
          .tag("tool", tool == null ? "other" : tool)
          .tag("result", r.isError() ? "error" : "ok")
          .register(registry)
          .increment();
    } else if (event instanceof RunEvent.Retry) {
      Counter.builder("capsule.runner.retries")
          .description("retries the harness announced (rate limits, overload)")
          .register(registry)
          .increment();
    }
  }

  private void firstOutput(String task) {
    long[] t = open.get(task);
    if (t != null && t[1] == 0) {
      t[1] = 1;
      Timer.builder("capsule.runner.first.output")
          .description("time from a run's acceptance to its first text, thinking or tool call")
          .publishPercentileHistogram()
          .register(registry)
          .record(registry.config().clock().monotonicTime() - t[0], TimeUnit.NANOSECONDS);
    }
  }

  private void finished(RunOutcome o) {
    open.remove(o.taskId());
    calls.keySet().removeIf(k -> k.startsWith(o.taskId() + "\u0000"));
    Counter.builder("capsule.runner.runs.finished")
        .description("runs finished, by outcome and failure kind")
        .tag("outcome", o.status().wire())
        .tag("failure", o.failureType().map(RunMeters::tagValue).orElse("none"))
        .register(registry)
        .increment();
    Timer.builder("capsule.runner.run.duration")
        .description("wall time of a run, from acceptance to outcome")
        .tag("outcome", o.status().wire())
        .publishPercentileHistogram()
        .maximumExpectedValue(Duration.ofHours(2))
        .register(registry)
        .record(o.duration());
    UsageSplit u = o.usage();
    tokens("fresh_input", u.freshInput());
    tokens("cache_read", u.cacheRead());
    tokens("cache_write", u.cacheWrite());
    tokens("output", u.output());
    tokens("thinking", u.thinking());
  }

  private void tokens(String kind, long amount) {
    Counter.builder("capsule.runner.tokens")
        .description("tokens spent by finished runs, by kind (the report's usage split)")
        .baseUnit("tokens")
        .tag("kind", kind)
        .register(registry)
        .increment(amount);
  }

  static String tagValue(String s) {
    return s != null && TAG_VALUE.matcher(s).matches() ? s : "other";
  }
}
