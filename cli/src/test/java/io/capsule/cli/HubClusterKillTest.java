package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.store.PostgresServer;
import io.capsule.protocol.tls.ClientTls;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12's proof of a hub cluster, with every part real: one throwaway PostgreSQL, three {@code
 * capsule hub --cluster} JVMs on 127.0.0.1, two {@code capsule runner} JVMs given all three nodes
 * ({@code --hub a,b,c}, both dialling node a first), and 20 streaming tasks submitted round-robin
 * to the three nodes. Every task streams 10 words and waits at a gate; then the node most runners
 * are on (a, unless a first connection failed and a runner moved on) is killed with SIGKILL and the
 * gate opens. Its runners fail over to the other nodes and resume; every task streams its other 30
 * words and reports. Read from a surviving node, each task has every event once (ids 1..n, each
 * word once, in order) and one report, and both survivors answer the same.
 *
 * <p>It measures issue 12's goal (every task applies frames again — its first new event reaches a
 * survivor's reader — within 10 s of the kill; asserted: {@link #FRAMES_AGAIN_WITHIN}) with the
 * shipped {@code capsule.hub.cluster} timings, printing the failover step by step first ({@link
 * FailoverTimeline}) and the late heartbeats. It takes 1.5-4 minutes. Skipped without PostgreSQL's
 * binaries unless {@code CAPSULE_REQUIRE_POSTGRES} is set (CI sets it): then it fails.
 *
 * <p>Every wire is on TLS, as a deployment across machines runs it (docs/operations.md, "TLS on
 * every wire"): the nodes' edge serves HTTPS and {@code wss://} with a certificate of a CA this
 * test makes, the runners trust it with {@code --ca-file} (this JVM's API clients through the
 * default {@link SSLContext}), and the nodes talk over Artery on mutual TLS, each with a
 * certificate of the cluster's CA. Plain-text clusters are covered by {@code HubClusterTest}.
 *
 * <p>The project's brain (its tasks, queue and runners' sequencing: one sharded actor) lives on
 * whichever node sharding placed it; when that is the victim, it starts on a survivor from the
 * store, and the gateways of the survivors close their runners' sockets so they resume against it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class HubClusterKillTest {
  private static final String PROJECT = "demo";
  private static final int TASKS = 20;
  private static final int WORDS_BEFORE = 10;
  private static final int WORDS = 40;

  /** Issue 12's goal, printed beside the figure: from the kill until every task applied a frame. */
  private static final Duration GOAL = Duration.ofSeconds(10);

  /**
   * Asserted: the goal itself. It was 15 s while the cluster's own steps (kill to a sharding
   * coordinator active on a survivor) took 8.3-11.1 s at load 7-27 on the shared 2-core machine and
   * the whole failover 10.3-14.4 s there; with the hub's CPU per frame halved since, the last
   * clean-clone CI runs measured 6.4-6.6 s at load ~15. If it fails, the printed failover timeline
   * says which step took the time.
   */
  private static final Duration FRAMES_AGAIN_WITHIN = GOAL;

  /**
   * Small heaps and C1 only: five JVMs share two cores with the build; none of them needs more.
   * Pekko's own INFO lines (the leader's removal, the singletons' and coordinators' moves) feed the
   * failover timeline.
   */
  private static final List<String> JVM =
      List.of(
          "-Xmx192m",
          "-XX:TieredStopAtLevel=1",
          "-Dcapsule.log.root=INFO",
          "-Dpekko.loglevel=INFO");

  /**
   * The runners' JVMs run their harnesses uncontained: the streaming harness waits for a gate file
   * in this test's temp dir, which a contained harness (private /tmp) cannot see; containment has
   * its own tests.
   */
  private static final List<String> RUNNER_JVM =
      List.of("-Xmx192m", "-XX:TieredStopAtLevel=1", "-Dcapsule.harness.containment=off");

  @TempDir Path work;

  private PostgresServer pg;
  private SSLContext defaultTls;
  private final List<HubProcess> hubs = new ArrayList<>();
  private final List<RunnerProcess> runners = new ArrayList<>();

  @BeforeAll
  void startPostgres() {
    // CI installs PostgreSQL and sets CAPSULE_REQUIRE_POSTGRES (.ci/run): there a missing server
    // fails this proof instead of skipping it.
    if (!PostgresServer.available() && System.getenv("CAPSULE_REQUIRE_POSTGRES") != null) {
      throw new AssertionError(
          "CAPSULE_REQUIRE_POSTGRES is set but PostgreSQL's binaries are missing under "
              + PostgresServer.BIN);
    }
    pg = PostgresServer.startOrSkip();
  }

  @AfterAll
  void stopEverything() {
    if (defaultTls != null) {
      SSLContext.setDefault(defaultTls);
    }
    runners.forEach(RunnerProcess::close);
    hubs.forEach(HubProcess::close);
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void killingTheNodeOfBothRunnersLosesNoEventAndRepeatsNone() throws Exception {
    Path secret =
        Files.writeString(work.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    Path password = Files.writeString(work.resolve("pg.pw"), pg.password());
    Path capsules = Files.createDirectories(work.resolve("capsules"));
    Path gate = work.resolve("gate");
    TestCapsules.capsule(capsules, "stream", streamingHarness(gate));
    ProjectTokens tokens = new ProjectTokens(Files.readAllBytes(secret), Duration.ofSeconds(30));
    List<String> store =
        List.of(
            "--store",
            pg.jdbcUrl(),
            "--store-user",
            pg.user(),
            "--store-password-file",
            password.toString());

    // The schema once, before any node starts (as an operator would): nodes then only check it.
    List<String> migrate = new ArrayList<>(List.of("hub", "migrate"));
    migrate.addAll(store);
    Cli.Result migrated = Cli.run(migrate.toArray(String[]::new));
    assertEquals(ExitCodes.DONE, migrated.exit(), migrated.err());

    // TLS on every wire (ClusterTlsFiles); this JVM's API clients trust the edge's CA.
    ClusterTlsFiles tls = ClusterTlsFiles.create(work, 3);
    defaultTls = SSLContext.getDefault();
    SSLContext.setDefault(ClientTls.trusting(Optional.of(tls.edgeCa())).sslContext());
    List<String> runnerTls = tls.runnerArgs();

    long bootStart = System.nanoTime();
    try {
      HubClusterStart.together(3, work, JVM, PROJECT, secret, store, hubs, tls::hubArgs);
    } catch (AssertionError e) {
      keepLogs(); // a node that did not start says why in its log, gone with the temp dir
      throw e;
    }
    for (HubProcess hub : hubs) {
      awaitLine(hub::output, "cluster: 3 nodes up", Duration.ofSeconds(180), hub.name, hub.log);
    }
    System.out.printf(
        "cluster of 3 up %d ms after the JVMs were started%n",
        Duration.ofNanos(System.nanoTime() - bootStart).toMillis());
    for (HubProcess hub : hubs) {
      assertTrue(hub.apiUrl().startsWith("https://"), hub.name + " " + hub.output());
      assertTrue(
          hub.output().stream().anyMatch(l -> l.startsWith("cluster transport: mutual TLS")),
          hub.name + " " + hub.output());
      assertTrue(
          hub.output().stream().noneMatch(l -> l.startsWith("W-TLS")),
          hub.name + " warns of no plain wire: " + hub.output());
    }
    HubProcess a = hubs.get(0);
    HubProcess b = hubs.get(1);
    HubProcess c = hubs.get(2);

    runners.add(
        RunnerProcess.start(
            "runner-1",
            work,
            RUNNER_JVM,
            a.runnerUrl() + "," + b.runnerUrl() + "," + c.runnerUrl(),
            Files.writeString(
                work.resolve("r1.token"),
                tokens.issue(PROJECT, Optional.of("r1"), Duration.ofMinutes(30))),
            capsules,
            runnerTls));
    runners.add(
        RunnerProcess.start(
            "runner-2",
            work,
            RUNNER_JVM,
            a.runnerUrl() + "," + c.runnerUrl() + "," + b.runnerUrl(),
            Files.writeString(
                work.resolve("r2.token"),
                tokens.issue(PROJECT, Optional.of("r2"), Duration.ofMinutes(30))),
            capsules,
            runnerTls));
    for (RunnerProcess r : runners) {
      awaitLine(r::output, "runner: connected to ", Duration.ofSeconds(180), r.name, r.log);
    }
    // The victim is the node most runners are on: a, unless a first connection failed and a
    // runner moved on to its next URL (it happens under load; the failover is working then).
    int[] onNode = new int[3];
    for (RunnerProcess r : runners) {
      for (int i = 0; i < 3; i++) {
        onNode[i] += r.connectedUrl().equals(hubs.get(i).runnerUrl()) ? 1 : 0;
      }
    }
    int v = 0;
    for (int i = 1; i < 3; i++) {
      v = onNode[i] > onNode[v] ? i : v;
    }
    HubProcess victim = hubs.get(v);
    List<HubProcess> survivors = new ArrayList<>(hubs);
    survivors.remove(victim);
    System.out.printf(
        "runners on a, b, c: %d, %d, %d; the victim is %s%n",
        onNode[0], onNode[1], onNode[2], victim.name);

    String apiToken =
        tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(30));
    List<HubApiClient> apis = new ArrayList<>();
    for (HubProcess hub : hubs) {
      apis.add(new HubApiClient(hub.apiUrl(), apiToken));
    }
    HubApiClient onB = new HubApiClient(survivors.get(0).apiUrl(), apiToken);
    HubApiClient onC = new HubApiClient(survivors.get(1).apiUrl(), apiToken);
    Map<String, TaskReader> readers = new LinkedHashMap<>();
    for (int i = 0; i < TASKS; i++) {
      String id = String.format("t-%02d", i);
      submit(apis.get(i % 3), "{\"capsule\":\"stream\",\"goal\":\"count\",\"id\":\"" + id + "\"}");
      // Read from the nodes that survive, so the reading itself goes on across the kill.
      readers.put(id, TaskReader.start(survivors.get(i % 2).apiUrl(), apiToken, id));
    }
    for (TaskReader r : readers.values()) {
      r.awaitWord(WORDS_BEFORE, Duration.ofSeconds(120));
    }

    long kill = System.nanoTime();
    java.time.LocalTime killedAt = java.time.LocalTime.now();
    victim.kill();
    Files.writeString(gate, "open\n");
    List<Long> back = new ArrayList<>();
    List<Long> perTask = new ArrayList<>();
    long drained = -1;
    try {
      for (RunnerProcess r : runners) {
        back.add(r.awaitConnectedAfter(kill, victim.runnerUrl(), Duration.ofSeconds(60)));
      }
      for (TaskReader r : readers.values()) {
        perTask.add(r.firstEventAfter(kill, Duration.ofSeconds(60)));
      }
      long last = 0;
      for (TaskReader r : readers.values()) {
        last = Math.max(last, r.reportAfter(kill, Duration.ofSeconds(120)));
      }
      drained = last;
    } finally {
      printFailover(killedAt, survivors, perTask, drained);
      keepLogs(); // here: the temp dir is gone by @AfterAll
    }
    long slowest = perTask.stream().mapToLong(Long::longValue).max().orElseThrow();
    System.out.printf(
        "every task applied frames again %d ms after the kill (goal: %d); first event per task %s ms;"
            + " runners connected again after %s ms; every report in by %d ms%n",
        slowest, GOAL.toMillis(), perTask, back, drained);
    assertTrue(survivors.stream().allMatch(HubProcess::alive), "the surviving nodes are still up");
    assertTrue(
        slowest <= FRAMES_AGAIN_WITHIN.toMillis(),
        "every task applied frames again after "
            + slowest
            + " ms, bound "
            + FRAMES_AGAIN_WITHIN
            + " (issue 12); the failover timeline above says which step took the time");

    for (Map.Entry<String, TaskReader> e : readers.entrySet()) {
      List<HubApiClient.Sse> events = e.getValue().awaitReport(Duration.ofSeconds(180));
      HubApiClient.assertContiguous(events);
      JsonNode report = events.get(events.size() - 1).data();
      assertEquals("done", report.path("status").asText(), e.getKey() + ": " + report);
      StringBuilder streamed = new StringBuilder();
      events.stream()
          .filter(ev -> ev.event().equals("text") && ev.data().has("delta"))
          .forEach(ev -> streamed.append(ev.data().get("delta").asText()));
      assertEquals(expectedText(), streamed.toString(), e.getKey() + ": every word once, in order");
      assertEquals(expectedText(), report.path("summary_business").asText(), e.getKey());
      // Every surviving node answers the same, from the first event.
      assertEquals(events, onB.follow(e.getKey(), 0), e.getKey() + " read on b");
      assertEquals(events, onC.follow(e.getKey(), 0), e.getKey() + " read on c");
      assertEquals("done", onC.get("/v1/tasks/" + e.getKey()).path("state").asText());
    }
  }

  /**
   * Submits on a node, as a client should: a 503 ({@code E-HUB-007}: the brain did not answer in
   * time, as under load) is tried again after its Retry-After; a 409 on a retry means the first try
   * was kept after all.
   */
  static void submit(HubApiClient api, String body) throws Exception {
    for (int attempt = 1; ; attempt++) {
      var r = api.submitRaw(body);
      if (r.statusCode() == 201 || (attempt > 1 && r.statusCode() == 409)) {
        return;
      }
      if (r.statusCode() != 503 || attempt == 10) {
        throw new AssertionError("submit answered " + r.statusCode() + ": " + r.body());
      }
      Thread.sleep(1000L * Long.parseLong(r.headers().firstValue("Retry-After").orElse("1")));
    }
  }

  private static String expectedText() {
    StringBuilder s = new StringBuilder();
    for (int i = 1; i <= WORDS; i++) {
      s.append(i == 1 ? "" : " ").append("w").append(i);
    }
    return s.toString();
  }

  /**
   * Streams words 1..10, waits until the gate file exists (polling every 0.3 s: 20 harnesses
   * polling cost little), streams words 11..40 (0.1 s apart, so the kill's outage falls mid-stream
   * for some), then the whole text as the result.
   */
  private static String streamingHarness(Path gate) {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "text=''\n"
        + "emit() {\n"
        + "  i=$1\n"
        + "  while [ $i -le $2 ]; do\n"
        + "    w=\"w$i\"; [ $i -gt 1 ] && w=\" w$i\"\n"
        + "    printf '{\"type\":\"delta\",\"text\":\"%s\"}\\n' \"$w\"; text=\"$text$w\"\n"
        + "    i=$((i+1))\n"
        + "    [ $i -gt "
        + WORDS_BEFORE
        + " ] && sleep 0.1\n"
        + "  done\n"
        + "}\n"
        + "emit 1 "
        + WORDS_BEFORE
        + "\n"
        + "while [ ! -e '"
        + gate
        + "' ]; do sleep 0.3; done\n"
        + "emit "
        + (WORDS_BEFORE + 1)
        + " "
        + WORDS
        + "\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$text\"\n";
  }

  /**
   * Prints where the failover's time went ({@link FailoverTimeline}): the cluster's steps from the
   * survivors' logs, the runners' from theirs, then what this test saw on the task streams. Printed
   * whether or not the failover worked, so a failing run says which step it stopped at.
   */
  private void printFailover(
      java.time.LocalTime killedAt, List<HubProcess> survivors, List<Long> perTask, long drained)
      throws java.io.IOException {
    List<Path> nodes = survivors.stream().map(h -> h.log).toList();
    List<Path> runnerLogs = runners.stream().map(r -> r.log).toList();
    FailoverTimeline t = new FailoverTimeline(killedAt);
    t.firstOf("a runner sees its socket close", "hub connection lost", runnerLogs);
    t.firstOf("a survivor marks the node unreachable", "Marking node as UNREACHABLE", nodes);
    t.firstOf("the split-brain resolver downs it", "SBR took decision", nodes);
    t.firstOf("the leader removes it", "Leader is removing", nodes);
    t.firstOf("a survivor is the oldest (singletons move)", "-> Oldest\\]", nodes);
    t.firstOf(
        "a sharding coordinator is active", "ShardCoordinator was moved to the active", nodes);
    t.firstOf("the project's brain starts", "the hub's brain starts here", nodes);
    t.firstOf("the brain has restored its tasks", "the brain restored", nodes);
    t.firstOf("a runner's socket waited for the brain", "the hub brain answered after", nodes);
    t.lastOf("every runner's hello is answered", "connected to the hub at", runnerLogs);
    if (perTask.size() == TASKS) {
      t.measured("the first task applies a frame", Collections.min(perTask));
      t.measured("every task applies frames again", Collections.max(perTask));
    }
    if (drained >= 0) {
      t.measured("every task has reported", drained);
    }
    t.print();
    FailoverTimeline.printHeartbeatHealth(hubs.stream().map(h -> h.log).toList(), killedAt);
    System.out.printf(
        "(the shipped capsule.hub.cluster timings expect the shards to move by ~%d ms)%n",
        io.capsule.hub.HubCluster.Failover.fromConfig(
                io.capsule.config.settings.CapsuleSettings.load().config())
            .expected()
            .toMillis());
  }

  /**
   * Copies the hub and runner logs to {@code target/hub-cluster-kill-logs} (the temp dir is deleted
   * after the test): the whole story of the last run, for what the timeline leaves out.
   */
  private void keepLogs() throws java.io.IOException {
    Path keep = Files.createDirectories(Path.of("target", "hub-cluster-kill-logs"));
    // Every process's log, including a node's that never started listening.
    try (var logs = Files.newDirectoryStream(work, "*.log")) {
      for (Path log : logs) {
        Files.copy(log, keep.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  /** Waits for a line of a process's stdout; a failure quotes the stdout and its log's end. */
  static void awaitLine(
      java.util.function.Supplier<List<String>> output,
      String text,
      Duration within,
      String who,
      Path log)
      throws InterruptedException {
    try {
      Await.until(() -> output.get().stream().anyMatch(l -> l.contains(text)), within, who);
    } catch (AssertionError e) {
      throw new AssertionError(
          who
              + " did not say '"
              + text
              + "' within "
              + within
              + "; it said "
              + output.get()
              + "\n"
              + RunnerProcess.tail(log),
          e);
    }
  }
}
