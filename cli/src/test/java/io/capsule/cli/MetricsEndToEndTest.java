package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.ReferenceHub;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both {@code /metrics} endpoints, the hub's (on its own address) and the runner's ({@code
 * --metrics}), scraped as Prometheus would during real runs on loopback: counters move exactly as
 * the runs went, and the token counters add up to the reports' usage.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MetricsEndToEndTest {
  private static final String PROJECT = "metrics";
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);
  private static final List<String> KINDS =
      List.of("fresh_input", "cache_read", "cache_write", "output", "thinking");

  @TempDir static Path capsules;

  private final HttpClient http = HttpClient.newHttpClient();
  private ActorSystem<Void> hubSystem;
  private ActorSystem<Void> runnerSystem;
  private ReferenceHub hub;
  private RunnerNode runner;
  private HubApiClient api;
  private String runnerMetrics;

  @BeforeAll
  void start() throws Exception {
    TestCapsules.capsule(capsules, "count", HubPageBrowserTest.countingHarness(40));
    TestCapsules.capsule(capsules, "slow", TestCapsules.slowHarness());
    CapsuleSettings settings = CapsuleSettings.load();
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    hubSystem = ActorSystem.create(Behaviors.empty(), "hub");
    runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
    hub =
        ReferenceHub.start(
                hubSystem, RuntimeWiring.protocol(settings), tokens, PROJECT, "127.0.0.1", 0)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    api =
        new HubApiClient(
            hub.apiUrl(),
            tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(30)));
    InetSocketAddress m = MetricsEndpoint.serve(runnerSystem, "127.0.0.1:0");
    runnerMetrics = "http://127.0.0.1:" + m.getPort() + "/metrics";
    runner =
        TestCapsules.connectedRunner(
            runnerSystem,
            settings,
            hub.runnerUrl(),
            PROJECT,
            tokens.issue(PROJECT, Optional.empty(), Duration.ofMinutes(30)),
            capsules,
            n -> {});
  }

  @AfterAll
  void stop() {
    if (runner != null) {
      runner.close();
    }
    if (hub != null) {
      hub.stop().toCompletableFuture().join();
    }
    if (runnerSystem != null) {
      runnerSystem.terminate();
    }
    if (hubSystem != null) {
      hubSystem.terminate();
    }
  }

  @Test
  @Order(1)
  void aRunFinishedDoneCountsOnceUnderDoneAndItsTokensAddUpToItsReport() throws Exception {
    api.submit("{\"capsule\":\"count\",\"goal\":\"count\",\"id\":\"t-m-done\"}");
    List<HubApiClient.Sse> events = api.follow("t-m-done", 0);
    JsonNode report = events.get(events.size() - 1).data();
    assertEquals("done", report.get("status").asText());

    Map<String, Double> hubSeries = series(scrape(hub.apiUrl() + "/metrics"));
    assertEquals(
        Map.of("capsule_hub_runs_finished_total{failure=\"none\",outcome=\"done\"}", 1.0),
        only(hubSeries, "capsule_hub_runs_finished_total{"));
    Map<String, Double> runnerSeries = series(scrape(runnerMetrics));
    assertEquals(
        Map.of("capsule_runner_runs_finished_total{failure=\"none\",outcome=\"done\"}", 1.0),
        only(runnerSeries, "capsule_runner_runs_finished_total{"));
    long total = 0;
    for (String kind : KINDS) {
      double used = report.get("usage").get(kind).asDouble();
      total += (long) used;
      assertEquals(
          used,
          hubSeries.get("capsule_hub_tokens_total{capsule=\"count\",kind=\"" + kind + "\"}"),
          kind);
      assertEquals(
          used, runnerSeries.get("capsule_runner_tokens_total{kind=\"" + kind + "\"}"), kind);
    }
    assertTrue(total > 0, "the harness reported usage: " + report);
    assertEquals(1.0, hubSeries.get("capsule_hub_runs_started_total"));
    assertEquals(1.0, runnerSeries.get("capsule_runner_first_output_seconds_count"));
    assertEquals(1.0, hubSeries.get("capsule_hub_runners_connected"));
  }

  @Test
  @Order(2)
  void aRunningTaskIsInFlightOnBothSidesUntilItsCanceledReport() throws Exception {
    api.submit("{\"capsule\":\"slow\",\"goal\":\"wait\",\"id\":\"t-m-slow\"}");
    api.follow("t-m-slow", 0, id -> true); // its first event reached the hub: it runs
    assertEquals(1.0, series(scrape(hub.apiUrl() + "/metrics")).get("capsule_hub_runs_in_flight"));
    assertEquals(1.0, series(scrape(runnerMetrics)).get("capsule_runner_runs_in_flight"));

    assertTrue(api.post("/v1/tasks/t-m-slow/cancel").path("canceled").asBoolean());
    List<HubApiClient.Sse> events = api.follow("t-m-slow", 0);
    assertEquals("canceled", events.get(events.size() - 1).data().get("failure_type").asText());
    Map<String, Double> hubSeries = series(scrape(hub.apiUrl() + "/metrics"));
    assertEquals(0.0, hubSeries.get("capsule_hub_runs_in_flight"));
    assertEquals(
        1.0,
        hubSeries.get("capsule_hub_runs_finished_total{failure=\"canceled\",outcome=\"failed\"}"));
    assertEquals(
        1.0,
        hubSeries.get("capsule_hub_runs_finished_total{failure=\"none\",outcome=\"done\"}"),
        "the earlier run's series did not move");
    assertEquals(0.0, series(scrape(runnerMetrics)).get("capsule_runner_runs_in_flight"));
  }

  /**
   * Meters registered at their first event, which these two runs do not have: a tool call, a retry,
   * an egress refusal, a refused frame. Every other meter of docs/operations.md's list must be in a
   * scrape after the runs, and every meter in a scrape must be in the list.
   */
  private static final Set<String> FIRST_USE =
      Set.of(
          "capsule_runner_tool_calls_total",
          "capsule_runner_retries_total",
          "capsule_runner_egress_refused_total",
          "capsule_hub_frames_refused_total");

  @Test
  @Order(3)
  void theReadmeListsExactlyTheMetersTheEndpointsServe() throws Exception {
    Set<String> served = new TreeSet<>();
    for (String url : List.of(hub.apiUrl() + "/metrics", runnerMetrics)) {
      for (String sample : series(scrape(url)).keySet()) {
        served.add(sample.replaceAll("\\{.*", "").replaceAll("_(bucket|count|sum|max)$", ""));
      }
    }
    Set<String> listed = readmeMeters();
    Set<String> unlisted = new TreeSet<>(served);
    unlisted.removeAll(listed);
    assertEquals(Set.of(), unlisted, "served but not in docs/operations.md's list");
    Set<String> missing = new TreeSet<>(listed);
    missing.removeAll(served);
    missing.removeAll(FIRST_USE);
    assertEquals(Set.of(), missing, "in docs/operations.md's list but not served after two runs");
  }

  /** The metric names in the table of docs/operations.md's "Metrics". */
  private static Set<String> readmeMeters() throws java.io.IOException {
    String readme =
        java.nio.file.Files.readString(
            Path.of("..").toAbsolutePath().normalize().resolve("docs/operations.md"));
    String section = readme.substring(readme.indexOf("## Metrics"));
    section = section.substring(0, section.indexOf("\n## ", 3));
    Set<String> names = new TreeSet<>();
    for (String line : section.split("\n")) {
      if (line.startsWith("| `capsule_")) {
        String first = line.split("\\|")[1];
        java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("`(capsule_[a-z_]+)`").matcher(first);
        while (m.find()) {
          names.add(m.group(1));
        }
      }
    }
    assertTrue(names.size() > 10, "the metrics table was found: " + names);
    return names;
  }

  private String scrape(String url) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    assertTrue(
        r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
    assertTrue(!r.body().contains("t-m-"), "no task id in any series");
    return r.body();
  }

  /** Every sample line as series name (with labels) to value. */
  private static Map<String, Double> series(String text) {
    Map<String, Double> out = new TreeMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      out.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
    }
    return out;
  }

  private static Map<String, Double> only(Map<String, Double> series, String prefix) {
    Map<String, Double> out = new TreeMap<>();
    series.forEach(
        (k, v) -> {
          if (k.startsWith(prefix)) {
            out.put(k, v);
          }
        });
    return out;
  }
}
