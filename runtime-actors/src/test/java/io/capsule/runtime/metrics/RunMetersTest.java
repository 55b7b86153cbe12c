package io.capsule.runtime.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import io.capsule.runtime.javadsl.RunStatus;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Run meters as a run's events drive them, on a registry with a clock the test moves. */
class RunMetersTest {
  private final MockClock clock = new MockClock();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
  private final RunMeters meters = new RunMeters(registry);

  @Test
  void aDoneRunCountsOnceUnderItsOutcomeAndAddsItsUsageByKind() {
    meters.on(new RunEvent.StateChanged("t-1", RunPhase.ACCEPTED));
    clock.add(Duration.ofMillis(250));
    meters.on(new RunEvent.TextDelta("t-1", "hel", "hel"));
    clock.add(Duration.ofMillis(100));
    meters.on(new RunEvent.TextDelta("t-1", "lo", "hello"));
    assertEquals(1.0, registry.get("capsule.runner.runs.in.flight").gauge().value());
    meters.on(finished("t-1", RunStatus.DONE, null, new UsageSplit(5, 7, 11, 13, 17)));

    assertEquals(1, registry.find("capsule.runner.runs.finished").counters().size());
    assertEquals(
        1.0,
        registry
            .get("capsule.runner.runs.finished")
            .tag("outcome", "done")
            .tag("failure", "none")
            .counter()
            .count());
    assertEquals(1.0, registry.get("capsule.runner.runs.started").counter().count());
    assertEquals(0.0, registry.get("capsule.runner.runs.in.flight").gauge().value());
    assertEquals(11.0, tokens("fresh_input"));
    assertEquals(5.0, tokens("cache_read"));
    assertEquals(7.0, tokens("cache_write"));
    assertEquals(13.0, tokens("output"));
    assertEquals(17.0, tokens("thinking"));
    var first = registry.get("capsule.runner.first.output").timer();
    assertEquals(1, first.count(), "only the first output is timed");
    assertEquals(250.0, first.totalTime(TimeUnit.MILLISECONDS));
    assertEquals(
        3.0,
        registry
            .get("capsule.runner.run.duration")
            .tag("outcome", "done")
            .timer()
            .totalTime(TimeUnit.SECONDS));
  }

  @Test
  void toolCallsAreCountedByToolAndResultAndRetriesOnTheirOwn() {
    meters.on(new RunEvent.StateChanged("t-2", RunPhase.ACCEPTED));
    meters.on(new RunEvent.ToolCalled("t-2", "c1", "Bash", "{}", 1));
    meters.on(new RunEvent.ToolCalled("t-2", "c2", "a name with spaces", "{}", 1));
    meters.on(new RunEvent.ToolResulted("t-2", "c1", "ok", false));
    meters.on(new RunEvent.ToolResulted("t-2", "c2", "no", true));
    meters.on(new RunEvent.Retry("t-2", 1, "overloaded"));
    meters.on(finished("t-2", RunStatus.FAILED, "E-RUN-033:quota", UsageSplit.ZERO));
    assertEquals(1.0, calls("Bash", "ok"));
    assertEquals(1.0, calls("other", "error"), "free text never becomes a tag");
    assertEquals(1.0, registry.get("capsule.runner.retries").counter().count());
    assertEquals(
        1.0,
        registry
            .get("capsule.runner.runs.finished")
            .tag("outcome", "failed")
            .tag("failure", "E-RUN-033:quota")
            .counter()
            .count());
  }

  @Test
  void driverCallsAreTimedByFunctionAndEngineWithStrangeValuesAsOther() {
    meters.driverCall("launch", "wasmtime", 2_000_000);
    meters.driverCall("parse", "wasmtime", 1_000_000);
    meters.driverCall("parse", "wasmtime", 3_000_000);
    meters.driverCall("parse", "a tag with spaces", 1);
    var parse = registry.get("capsule.runner.driver.calls").tag("function", "parse");
    assertEquals(2, parse.tag("engine", "wasmtime").timer().count());
    assertEquals(
        4.0,
        parse.tag("engine", "wasmtime").timer().totalTime(TimeUnit.MILLISECONDS),
        "both parse calls");
    assertEquals(
        1,
        registry
            .get("capsule.runner.driver.calls")
            .tag("function", "launch")
            .tag("engine", "wasmtime")
            .timer()
            .count());
    assertEquals(
        1,
        registry
            .get("capsule.runner.driver.calls")
            .tag("function", "parse")
            .tag("engine", "other")
            .timer()
            .count());
  }

  @Test
  void harnessSpawnsAreTimedByResultAndEgressRefusalsCounted() {
    meters.harnessSpawn(true, 5_000_000);
    meters.harnessSpawn(false, 1_000_000);
    meters.egressRefused();
    meters.egressRefused();
    assertEquals(
        5.0,
        registry
            .get("capsule.runner.harness.spawn")
            .tag("result", "started")
            .timer()
            .totalTime(TimeUnit.MILLISECONDS));
    assertEquals(
        1, registry.get("capsule.runner.harness.spawn").tag("result", "failed").timer().count());
    assertEquals(2.0, registry.get("capsule.runner.egress.refused").counter().count());
  }

  @Test
  void aJavaDriverIsTaggedJava() {
    assertEquals("java", DriverEngines.of(new Object()));
  }

  @Test
  void theRuntimeExtensionRecordsNothingUntilBoundAndBindsOnce() {
    RuntimeMetrics unbound = newExtension();
    unbound.on(new RunEvent.StateChanged("t-3", RunPhase.ACCEPTED)); // no registry: a no-op
    assertEquals(Optional.empty(), unbound.meters());
    RunMeters bound = unbound.bind(registry);
    assertEquals(registry, bound.registry());
    assertThrows(IllegalStateException.class, () -> unbound.bind(new SimpleMeterRegistry()));
  }

  private static RuntimeMetrics newExtension() {
    var kit = org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit.create();
    try {
      return RuntimeMetrics.get(kit.system());
    } finally {
      kit.shutdownTestKit();
    }
  }

  private double tokens(String kind) {
    return registry.get("capsule.runner.tokens").tag("kind", kind).counter().count();
  }

  private double calls(String tool, String result) {
    return registry
        .get("capsule.runner.tool.calls")
        .tag("tool", tool)
        .tag("result", result)
        .counter()
        .count();
  }

  private static RunEvent finished(String task, RunStatus status, String failure, UsageSplit u) {
    return new RunEvent.Finished(
        new RunOutcome(
            task,
            status,
            Optional.of("hello"),
            1,
            u,
            Optional.ofNullable(failure).map(f -> f.split(":")[0]),
            Optional.ofNullable(failure),
            "m",
            Optional.empty(),
            Duration.ofSeconds(3)));
  }
}
