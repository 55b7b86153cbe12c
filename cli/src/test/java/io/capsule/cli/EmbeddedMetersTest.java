package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import io.capsule.runtime.metrics.RuntimeMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An embedder's own registries, one passed to the reference hub and one bound to the runner's
 * runtime, during a real run whose hub connection is cut mid-run (a real TCP outage between runner
 * and hub): every meter moves as the run went, the frames the runner produced during the outage are
 * counted as replayed after its one reconnect, and the hub serves no {@code /metrics} of its own.
 */
// A separate thread: a stream that never ends (a runner that never comes back) must fail the test.
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EmbeddedMetersTest {
  private static final String PROJECT = "embedded";
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);

  @TempDir Path capsules;

  private final SimpleMeterRegistry hubMeters = new SimpleMeterRegistry();
  private final SimpleMeterRegistry runnerMeters = new SimpleMeterRegistry();
  private ActorSystem<Void> hubSystem;
  private ActorSystem<Void> runnerSystem;
  private ReferenceHub hub;
  private RunnerNode runner;
  private CuttableProxy proxy;

  @AfterEach
  void stop() {
    if (runner != null) {
      runner.close();
    }
    if (proxy != null) {
      proxy.close();
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
  void passedRegistriesSeeTheRunAndTheFramesReplayedAfterACut() throws Exception {
    TestCapsules.capsule(capsules, "pause", pausingHarness());
    CapsuleSettings settings = CapsuleSettings.load();
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    hubSystem = ActorSystem.create(Behaviors.empty(), "hub");
    runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
    hub =
        ReferenceHub.start(
                hubSystem,
                RuntimeWiring.protocol(settings),
                tokens,
                PROJECT,
                "127.0.0.1",
                0,
                HubJournal.none(),
                Optional.of(hubMeters))
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    RuntimeMetrics.get(runnerSystem).bind(runnerMeters);
    proxy = new CuttableProxy(hub.address().getPort());
    runner =
        TestCapsules.connectedRunner(
            runnerSystem,
            settings,
            "ws://127.0.0.1:" + proxy.port() + "/v1/runner",
            PROJECT,
            tokens.issue(PROJECT, Optional.of("r-cut"), TokenScope.RUNNER, Duration.ofMinutes(30)),
            capsules,
            n -> {});
    HubApiClient api =
        new HubApiClient(
            hub.apiUrl(),
            tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(30)));

    api.submit("{\"capsule\":\"pause\",\"goal\":\"wait\",\"id\":\"t-cut\"}");
    api.follow("t-cut", 0, id -> true); // it runs: the harness now pauses before its answer
    proxy.cut();
    // The run ends while the runner cannot reach its hub: its last frames wait for the reconnect.
    Await.until(
        () -> count(runnerMeters, "capsule.runner.runs.finished") == 1.0,
        Duration.ofSeconds(60),
        "the run finished");
    double sentWhileCut = functionCount(runnerMeters, "capsule.runner.frames.sent");
    proxy.heal();
    List<HubApiClient.Sse> events = api.follow("t-cut", 0);
    JsonNode report = events.get(events.size() - 1).data();
    assertEquals("done", report.get("status").asText(), report.toString());
    assertEquals("before after", report.get("summary_business").asText());

    assertEquals(1.0, functionCount(runnerMeters, "capsule.runner.hub.reconnects"));
    double replayed = functionCount(runnerMeters, "capsule.runner.frames.replayed");
    assertTrue(replayed >= 2, "the delta and the report made during the cut: " + replayed);
    assertTrue(replayed <= sentWhileCut, replayed + " replayed of " + sentWhileCut + " sent");
    assertEquals(
        1,
        timers(runnerMeters, "capsule.runner.harness.spawn")
            .tag("result", "started")
            .timer()
            .count());
    assertEquals(
        1,
        timers(runnerMeters, "capsule.runner.driver.calls")
            .tag("function", "launch")
            .timers()
            .stream()
            .mapToLong(t -> t.count())
            .sum());
    Set<String> engines =
        timers(runnerMeters, "capsule.runner.driver.calls").timers().stream()
            .map(t -> t.getId().getTag("engine"))
            .collect(Collectors.toSet());
    assertEquals(1, engines.size(), engines.toString());
    assertTrue(
        Set.of("wasmtime", "chicory").contains(engines.iterator().next()), engines.toString());
    assertTrue(
        timers(runnerMeters, "capsule.runner.driver.calls")
                .tag("function", "parse")
                .timers()
                .stream()
                .mapToLong(t -> t.count())
                .sum()
            >= 1);

    assertEquals(
        1.0, hubMeters.get("capsule.hub.runs.finished").tag("outcome", "done").counter().count());
    assertEquals(1, hubMeters.get("capsule.hub.queue.wait").timer().count());
    assertEquals(1.0, functionCount(hubMeters, "capsule.hub.frames.sent"), "one task.assign");
    assertEquals(0.0, hubMeters.get("capsule.hub.held.frames").gauge().value());
    assertEquals(0.0, hubMeters.get("capsule.hub.queue.depth").gauge().value());
    assertEquals(
        2.0,
        hubMeters.get("capsule.hub.runner.connections").tag("event", "up").counter().count(),
        "connected, and again after the cut");

    HttpResponse<String> metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/metrics"))
                    .timeout(Duration.ofSeconds(20))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(404, metrics.statusCode(), "the embedder exposes its registry, not the hub");
  }

  private static Search timers(MeterRegistry r, String name) {
    return r.find(name);
  }

  private static double count(MeterRegistry r, String name) {
    return r.find(name).counters().stream().mapToDouble(c -> c.count()).sum();
  }

  private static double functionCount(MeterRegistry r, String name) {
    return r.get(name).functionCounter().count();
  }

  /**
   * Says a word, pauses (long enough for the test to cut the connection after seeing the run
   * start), then says the rest and finishes.
   */
  private static String pausingHarness() {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "echo '{\"type\":\"delta\",\"text\":\"before\"}'\n"
        + "sleep 5\n"
        + "echo '{\"type\":\"delta\",\"text\":\" after\"}'\n"
        + "echo '{\"type\":\"result\",\"text\":\"before after\"}'\n";
  }
}
