package io.capsule.hub.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The hub's meters as its events drive them, on a registry the test owns. */
class HubMetricsTest {
  private static final RunnerKey R = new RunnerKey("p", "r-1");
  private static final Map<String, String> CAPSULES = Map.of("t-1", "hello", "t-2", "slow");

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final HubMetrics metrics = new HubMetrics(registry, id -> CAPSULES.getOrDefault(id, "?"));

  @Test
  void aDoneReportIncrementsExactlyOneOutcomeSeriesAndAddsItsUsageByKindAndCapsule() {
    metrics.on(progress("t-1", 1, "text"));
    metrics.on(progress("t-1", 2, "text"));
    metrics.on(report("t-1", "done", null, new UsageSplit(5, 7, 11, 13, 17)));

    assertEquals(1, registry.find("capsule.hub.runs.finished").counters().size());
    assertEquals(1.0, finished("done", "none"));
    assertEquals(1.0, registry.get("capsule.hub.runs.started").counter().count());
    assertEquals(0.0, registry.get("capsule.hub.runs.in.flight").gauge().value());
    assertEquals(11.0, tokens("fresh_input", "hello"));
    assertEquals(5.0, tokens("cache_read", "hello"));
    assertEquals(7.0, tokens("cache_write", "hello"));
    assertEquals(13.0, tokens("output", "hello"));
    assertEquals(17.0, tokens("thinking", "hello"));
    assertEquals(
        2.0, registry.get("capsule.hub.frames.applied").tag("kind", "text").counter().count());
  }

  @Test
  void theQueueWaitIsTimedFromSubmissionToPlacement() {
    metrics.placed("t-1", "p/r-1", java.time.Instant.now().minusSeconds(3));
    var wait = registry.get("capsule.hub.queue.wait").timer();
    assertEquals(1, wait.count());
    assertTrue(wait.totalTime(java.util.concurrent.TimeUnit.SECONDS) >= 3.0, wait.toString());
  }

  @Test
  void wireCountsAreReadAtEachScrapeAndHeldBytesSumOverRunners() {
    HubTraffic traffic = new HubTraffic();
    metrics.traffic(traffic);
    traffic.sent();
    traffic.sent();
    traffic.replayed(1);
    traffic.held(R, 300);
    traffic.held(new RunnerKey("p", "r-2"), 200);
    assertEquals(2.0, registry.get("capsule.hub.frames.sent").functionCounter().count());
    assertEquals(1.0, registry.get("capsule.hub.frames.replayed").functionCounter().count());
    assertEquals(500.0, registry.get("capsule.hub.held.frames").gauge().value());
    traffic.held(R, 0); // its gap filled
    assertEquals(200.0, registry.get("capsule.hub.held.frames").gauge().value());
  }

  @Test
  void runsInFlightCountTasksBetweenTheirFirstProgressAndTheirReport() {
    metrics.on(progress("t-1", 1, "state"));
    metrics.on(progress("t-2", 1, "state"));
    metrics.on(progress("t-2", 2, "text"));
    assertEquals(2.0, registry.get("capsule.hub.runs.in.flight").gauge().value());
    assertEquals(2.0, registry.get("capsule.hub.runs.started").counter().count());
    metrics.on(report("t-2", "failed", "canceled", UsageSplit.ZERO));
    assertEquals(1.0, registry.get("capsule.hub.runs.in.flight").gauge().value());
    assertEquals(1.0, finished("failed", "canceled"));
  }

  @Test
  void refusalsAndConnectionsAreCountedByCodeAndDirection() {
    metrics.on(new HubEvent.RunnerUp(R, null));
    metrics.on(new HubEvent.RunnerDown(R, "closed"));
    metrics.on(new HubEvent.RunnerUp(R, null));
    metrics.on(new HubEvent.Refused(R, Diagnostic.of(Code.E_PRO_004, "bad frame")));
    assertEquals(2.0, connections("up"));
    assertEquals(1.0, connections("down"));
    assertEquals(
        1.0, registry.get("capsule.hub.frames.refused").tag("code", "E-PRO-004").counter().count());
  }

  /** Runner-supplied strings become tags only when they look like a kind, never like free text. */
  @ParameterizedTest
  @CsvSource(
      textBlock =
          """
          done,                 done
          E-RUN-033:quota,      E-RUN-033:quota
          canceled,             canceled
          'a prompt with words', other
          '',                   other
          averyveryveryveryveryveryveryveryveryveryverylongstatus, other
          """)
  void tagValuesFromRunnersStayLowCardinality(String in, String tag) {
    assertEquals(tag, HubMetrics.tagValue(in));
  }

  @Test
  void progressKindsOutsideTheProtocolsListAreCountedAsOther() {
    metrics.on(progress("t-1", 1, "made-up-kind-42"));
    assertEquals(
        1.0, registry.get("capsule.hub.frames.applied").tag("kind", "other").counter().count());
  }

  @Test
  void prometheusRendersTheCountersWithTheirConventionalNames() {
    PrometheusMeterRegistry prom = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    HubMetrics m = new HubMetrics(prom, id -> "hello").watch(() -> 1, () -> 3);
    m.on(report("t-1", "done", null, new UsageSplit(0, 0, 11, 13, 0)));
    String text = prom.scrape();
    assertTrue(
        text.contains("capsule_hub_runs_finished_total{failure=\"none\",outcome=\"done\"} 1.0"),
        text);
    assertTrue(
        text.contains("capsule_hub_tokens_total{capsule=\"hello\",kind=\"output\"} 13.0"), text);
    assertTrue(text.contains("capsule_hub_queue_depth 3.0"), text);
    assertTrue(text.contains("capsule_hub_runners_connected 1.0"), text);
  }

  private double finished(String outcome, String failure) {
    Counter c =
        registry
            .get("capsule.hub.runs.finished")
            .tag("outcome", outcome)
            .tag("failure", failure)
            .counter();
    return c.count();
  }

  private double tokens(String kind, String capsule) {
    return registry
        .get("capsule.hub.tokens")
        .tag("kind", kind)
        .tag("capsule", capsule)
        .counter()
        .count();
  }

  private double connections(String event) {
    return registry.get("capsule.hub.runner.connections").tag("event", event).counter().count();
  }

  private static HubEvent progress(String task, long seq, String kind) {
    return new HubEvent.Progress(
        R, new TaskProgress(task, kind, JsonNodeFactory.instance.objectNode()).withSeq(seq));
  }

  private static HubEvent report(String task, String status, String failure, UsageSplit usage) {
    TaskReportBody.Builder b = TaskReportBody.builder(task, status, usage);
    if (failure != null) {
      b.failureType(failure);
    }
    return new HubEvent.Report(R, new TaskReport(b.build()).withSeq(9));
  }
}
