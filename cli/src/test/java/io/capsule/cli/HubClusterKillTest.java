package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.store.PostgresServer;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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
 * <p>It prints the time from the kill until both runners are connected again and until every task
 * applies frames again (the first new event of the slowest task reaching a reader on a surviving
 * node; the harness's gate polling adds up to 0.3 s). Goal: within 10 s with the shipped {@code
 * capsule.hub.cluster} timings. It also prints when a survivor removed the dead node, the cluster's
 * own share of the failover, and (the timeline) the milestones of the survivors' and runners' logs
 * after the kill. Measured on the shared 2-core machine at load ~15 (other builds running): the
 * three nodes formed a cluster ~18 s after their JVMs started; node a was marked unreachable 4.5 s
 * after the kill, downed by the split-brain resolver at 7.5 s and removed at 8.6 s; the brain
 * started on a survivor at 10.2 s and restored in 0.3 s; the runners were connected again (hello
 * accepted) after 10.6-10.8 s; every task applied frames again after 10.7-17.3 s, the spread being
 * the runners' replay of 320 frames each, applied one synchronous journal write per frame, task
 * after task. Before the gateways announced their socket again every second the runners came back
 * only after 21.6-29.2 s and every task after 26-33 s (a first announcement sent while the dead
 * node was still a member was lost, and the socket waited out its 20 s welcome). The whole test
 * takes about 1-5 minutes, most of it JVM and PostgreSQL start-up. Skipped, with the install
 * command, where PostgreSQL's binaries are absent, unless {@code CAPSULE_REQUIRE_POSTGRES} is set
 * (CI sets it): then it fails.
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

  /** About twice the measured 10.8 s (see the class comment). */
  private static final Duration RUNNERS_BACK_WITHIN = Duration.ofSeconds(25);

  /** About twice the measured 17.3 s (see the class comment). */
  private static final Duration FRAMES_AGAIN_WITHIN = Duration.ofSeconds(35);

  /** Small heaps and C1 only: five JVMs share two cores with the build; none of them needs more. */
  private static final List<String> JVM =
      List.of("-Xmx192m", "-XX:TieredStopAtLevel=1", "-Dcapsule.log.root=INFO");

  /**
   * What the failover timeline picks from the hub nodes' logs (Pekko's at INFO): the cluster's
   * decision and removal, the sharding coordinator's move, the brain's start and restore, the
   * gateways' closes and the first hellos.
   */
  private static final java.util.regex.Pattern MILESTONE =
      java.util.regex.Pattern.compile(
          "UNREACHABLE|SBR took decision|Leader is removing|[Ss]ingleton|[Cc]oordinator|brain|hello on"
              + "|Starting shard|no hub|reconnect|onnected|cannot restore|Shard .* allocated");

  /**
   * The runners' JVMs run their harnesses uncontained: the streaming harness waits for a gate file
   * in this test's temp dir, which a contained harness (private /tmp) cannot see; containment has
   * its own tests.
   */
  private static final List<String> RUNNER_JVM =
      List.of("-Xmx192m", "-XX:TieredStopAtLevel=1", "-Dcapsule.harness.containment=off");

  @TempDir Path work;

  private PostgresServer pg;
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

    int[] http = freePorts(3);
    int[] artery = freePorts(3);
    String seeds = "127.0.0.1:" + artery[0] + ",127.0.0.1:" + artery[1] + ",127.0.0.1:" + artery[2];
    long bootStart = System.nanoTime();
    List<Thread> starting = new ArrayList<>();
    HubProcess[] started = new HubProcess[3];
    Throwable[] failed = new Throwable[3];
    for (int i = 0; i < 3; i++) {
      int n = i;
      List<String> args =
          new ArrayList<>(
              List.of(
                  "--listen",
                  "127.0.0.1:" + http[n],
                  "--project",
                  PROJECT,
                  "--secret-file",
                  secret.toString(),
                  "--cluster",
                  "--seed",
                  seeds,
                  "--canonical",
                  "127.0.0.1:" + artery[n]));
      args.addAll(store);
      // Started together, as a deployment would: each JVM's start-up overlaps the others'.
      Thread t =
          new Thread(
              () -> {
                try {
                  started[n] =
                      HubProcess.start(
                          "hub-" + (char) ('a' + n), work, JVM, args, Duration.ofSeconds(180));
                } catch (Throwable e) {
                  failed[n] = e;
                }
              });
      t.start();
      starting.add(t);
    }
    for (Thread t : starting) {
      t.join();
    }
    for (int i = 0; i < 3; i++) {
      if (started[i] != null) {
        hubs.add(started[i]);
      }
    }
    for (Throwable e : failed) {
      if (e != null) {
        throw new AssertionError("a hub node did not start", e);
      }
    }
    for (HubProcess hub : hubs) {
      awaitLine(hub::output, "cluster: 3 nodes up", Duration.ofSeconds(180), hub.name, hub.log);
    }
    System.out.printf(
        "cluster of 3 up %d ms after the JVMs were started%n",
        Duration.ofNanos(System.nanoTime() - bootStart).toMillis());
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
            capsules));
    runners.add(
        RunnerProcess.start(
            "runner-2",
            work,
            RUNNER_JVM,
            a.runnerUrl() + "," + c.runnerUrl() + "," + b.runnerUrl(),
            Files.writeString(
                work.resolve("r2.token"),
                tokens.issue(PROJECT, Optional.of("r2"), Duration.ofMinutes(30))),
            capsules));
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
    for (RunnerProcess r : runners) {
      back.add(r.awaitConnectedAfter(kill, victim.runnerUrl(), Duration.ofSeconds(60)));
    }
    // The survivors' own view: when they removed the dead node (its shards may start elsewhere
    // down-removal-margin later). This is the cluster's part of the failover, whatever the hub
    // does.
    String dead = "cluster: node 127.0.0.1:" + artery[v] + " removed";
    HubProcess first = survivors.get(0);
    awaitLine(first::output, dead, Duration.ofSeconds(60), first.name, first.log);
    long removedMs = Duration.ofNanos(first.saidAt(dead).orElseThrow() - kill).toMillis();
    System.out.printf(
        "the victim removed from the cluster by %d ms after the kill (expected ~%d ms)%n",
        removedMs,
        io.capsule.hub.HubCluster.Failover.fromConfig(
                io.capsule.config.settings.CapsuleSettings.load().config())
            .expected()
            .toMillis());
    System.out.printf(
        "after kill -9 of the node of both runners: runners connected again after %s ms%n", back);
    long slowest = 0;
    List<Long> perTask = new ArrayList<>();
    for (TaskReader r : readers.values()) {
      perTask.add(r.firstEventAfter(kill, Duration.ofSeconds(120)));
      slowest = Math.max(slowest, perTask.get(perTask.size() - 1));
    }
    System.out.printf("first event after the kill, per task: %s ms%n", perTask);
    System.out.printf(
        "every task applied frames again %d ms after the kill (goal: 10000)%n", slowest);
    // Bounds with room over what was measured (runners 10.8 s, every task 17.3 s at load ~15;
    // before the gateways announced again, 21.6-29.2 s and 26-33 s): a regression to waiting out a
    // welcome timeout again fails here, a slow machine does not.
    assertTrue(
        back.stream().allMatch(ms -> ms <= RUNNERS_BACK_WITHIN.toMillis()),
        "runners connected again after " + back + " ms, bound " + RUNNERS_BACK_WITHIN);
    assertTrue(
        slowest <= FRAMES_AGAIN_WITHIN.toMillis(),
        "every task applied frames again after " + slowest + " ms, bound " + FRAMES_AGAIN_WITHIN);
    for (HubProcess hub : survivors) {
      printTimeline(hub.name, hub.log, killedAt);
    }
    for (RunnerProcess r : runners) {
      printTimeline(r.name, r.log, killedAt);
    }
    keepLogs();

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
    assertTrue(survivors.stream().allMatch(HubProcess::alive), "the surviving nodes are still up");
  }

  /**
   * Submits on a node, as a client should: a 503 ({@code E-HUB-007}: the brain did not answer in
   * time, as under load) is tried again after its Retry-After; a 409 on a retry means the first try
   * was kept after all.
   */
  private static void submit(HubApiClient api, String body) throws Exception {
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

  private static int[] freePorts(int n) throws Exception {
    int[] ports = new int[n];
    List<ServerSocket> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        ports[i] = s.getLocalPort();
      }
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
    return ports;
  }

  /**
   * Copies the hub and runner logs to {@code target/hub-cluster-kill-logs} (the temp dir is deleted
   * after the test): the whole story of the last run, for what the timeline leaves out.
   */
  private void keepLogs() throws java.io.IOException {
    Path keep = Files.createDirectories(Path.of("target", "hub-cluster-kill-logs"));
    for (HubProcess hub : hubs) {
      Files.copy(hub.log, keep.resolve(hub.log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
    for (RunnerProcess r : runners) {
      Files.copy(r.log, keep.resolve(r.log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /**
   * Prints the lines of a node's log (stamped {@code HH:mm:ss.SSS} by logback) from the kill on
   * that match {@link #MILESTONE}, each with its time after the kill: where the failover's time
   * goes. At most 60 lines per node, so a chatty log cannot flood the test's output.
   */
  private static void printTimeline(String who, Path log, java.time.LocalTime killedAt)
      throws java.io.IOException {
    int printed = 0;
    for (String line : Files.readAllLines(log)) {
      if (line.length() < 13 || !line.matches("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} .*")) {
        continue;
      }
      long ms =
          Duration.between(killedAt, java.time.LocalTime.parse(line.substring(0, 12))).toMillis();
      if (ms < -500 || !MILESTONE.matcher(line).find()) {
        continue;
      }
      System.out.printf(
          "timeline %s +%d ms: %s%n", who, ms, line.substring(13, Math.min(line.length(), 230)));
      if (++printed == 60) {
        return;
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
