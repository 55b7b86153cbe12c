package io.capsule.cli;

import static io.capsule.cli.HubClusterKillTest.awaitLine;
import static io.capsule.cli.HubClusterKillTest.submit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.store.PostgresServer;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hub node that stalls or is cut off costs no more than a dead one (docs/settings.md, "Runner
 * liveness" and "A cut-off node lets go"), with every part real: one throwaway PostgreSQL, three
 * {@code capsule hub --cluster} JVMs, two {@code capsule runner} JVMs with the shipped liveness
 * settings, and streaming tasks that wait at two gates. One cluster, two faults in turn (a cluster
 * boot is most of the cost):
 *
 * <ol>
 *   <li><b>A silent path.</b> Runner 1 reaches node P (not the brain's) through a {@link
 *       CuttableProxy}; the proxy stops forwarding without closing anything. Runner 1 hears no
 *       pong, gives P up and resumes on another node.
 *   <li><b>A frozen node.</b> The brain's node B, where runner 2 is, gets SIGSTOP for 12 s, then
 *       SIGCONT. Runner 2 gives B up, the cluster downs B and starts the brain on a survivor, and
 *       B, woken, writes nothing more (its journal is fenced, {@code E-HUB-009}) and stops.
 * </ol>
 *
 * After each fault: every runner that was on the affected node connects elsewhere and every task
 * applies frames again (its first new event reaches a reader) within {@link #WITHIN}; at the end
 * every task has every word once, in order, and one report, read alike from both survivors, and no
 * row of the store was written by B's entities after B woke. Skipped without PostgreSQL's binaries
 * unless {@code CAPSULE_REQUIRE_POSTGRES} is set (CI sets it): then it fails. 2-4 minutes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 480, unit = TimeUnit.SECONDS)
class HubClusterStallTest {
  private static final String PROJECT = "demo";
  private static final int TASKS = 12;
  private static final int GATE_1 = 10;
  private static final int GATE_2 = 25;
  private static final int WORDS = 40;

  /** The goal: from the fault until every task applied a frame again. */
  private static final Duration WITHIN = Duration.ofSeconds(10);

  /** How long B stays frozen: past the cluster's downing (~5 s) and the runners' silence limit. */
  private static final Duration FROZEN = Duration.ofSeconds(12);

  /** As in {@link HubClusterKillTest}: five JVMs share two cores with the build. */
  private static final List<String> JVM =
      List.of(
          "-Xmx192m",
          "-XX:TieredStopAtLevel=1",
          "-Dcapsule.log.root=INFO",
          "-Dpekko.loglevel=INFO");

  private static final List<String> RUNNER_JVM =
      List.of("-Xmx192m", "-XX:TieredStopAtLevel=1", "-Dcapsule.harness.containment=off");

  @TempDir Path work;

  private PostgresServer pg;
  private final List<HubProcess> hubs = new ArrayList<>();
  private final List<RunnerProcess> runners = new ArrayList<>();
  private CuttableProxy proxy;

  @BeforeAll
  void startPostgres() {
    if (!PostgresServer.available() && System.getenv("CAPSULE_REQUIRE_POSTGRES") != null) {
      throw new AssertionError(
          "CAPSULE_REQUIRE_POSTGRES is set but PostgreSQL's binaries are missing under "
              + PostgresServer.BIN);
    }
    pg = PostgresServer.startOrSkip();
  }

  @AfterAll
  void stopEverything() throws Exception {
    for (HubProcess hub : hubs) {
      if (hub.alive()) {
        signal("CONT", hub); // a frozen JVM ignores SIGTERM until it runs again
      }
    }
    runners.forEach(RunnerProcess::close);
    hubs.forEach(HubProcess::close);
    if (proxy != null) {
      proxy.close();
    }
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void aSilentPathAndAFrozenNodeEachCostNoMoreThanADeadNode() throws Exception {
    try {
      silentPathThenFrozenNode();
    } finally {
      keepLogs(); // here: the temp dir is gone by @AfterAll
    }
  }

  private void silentPathThenFrozenNode() throws Exception {
    Path secret =
        Files.writeString(work.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    Path password = Files.writeString(work.resolve("pg.pw"), pg.password());
    Path capsules = Files.createDirectories(work.resolve("capsules"));
    Path gate1 = work.resolve("gate1");
    Path gate2 = work.resolve("gate2");
    TestCapsules.capsule(capsules, "stream", streamingHarness(gate1, gate2));
    ProjectTokens tokens = new ProjectTokens(Files.readAllBytes(secret), Duration.ofSeconds(30));
    List<String> store =
        List.of(
            "--store",
            pg.jdbcUrl(),
            "--store-user",
            pg.user(),
            "--store-password-file",
            password.toString());
    List<String> migrate = new ArrayList<>(List.of("hub", "migrate"));
    migrate.addAll(store);
    Cli.Result migrated = Cli.run(migrate.toArray(String[]::new));
    assertEquals(ExitCodes.DONE, migrated.exit(), migrated.err());

    HubClusterStart.together(3, work, JVM, PROJECT, secret, store, hubs);
    for (HubProcess hub : hubs) {
      awaitLine(hub::output, "cluster: 3 nodes up", Duration.ofSeconds(180), hub.name, hub.log);
    }
    String apiToken =
        tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(30));
    // The brain starts on first use: ask for it, then find the node it started on.
    HubApiClient first = new HubApiClient(hubs.get(0).apiUrl(), apiToken);
    Await.until(() -> answers(first, "/v1/tasks"), Duration.ofSeconds(120), "the brain answers");
    HubProcess b = brainNode();
    List<HubProcess> others = new ArrayList<>(hubs);
    others.remove(b);
    HubProcess p = others.get(0);
    HubProcess q = others.get(1);
    System.out.printf("the brain is on %s; the silent path goes to %s%n", b.name, p.name);

    proxy = new CuttableProxy(p.port());
    String viaProxy = "ws://127.0.0.1:" + proxy.port() + "/v1/runner";
    runners.add(runner("runner-1", "r1", tokens, viaProxy, q.runnerUrl(), b.runnerUrl()));
    runners.add(runner("runner-2", "r2", tokens, b.runnerUrl(), q.runnerUrl(), p.runnerUrl()));
    for (RunnerProcess r : runners) {
      awaitLine(r::output, "runner: connected to ", Duration.ofSeconds(180), r.name, r.log);
    }

    Map<String, TaskReader> readers = new LinkedHashMap<>();
    List<HubApiClient> apis = List.of(apiOn(p, apiToken), apiOn(q, apiToken));
    for (int i = 0; i < TASKS; i++) {
      String id = String.format("t-%02d", i);
      submit(apis.get(i % 2), "{\"capsule\":\"stream\",\"goal\":\"count\",\"id\":\"" + id + "\"}");
      // Read from P and Q: both serve through both faults.
      readers.put(id, TaskReader.start((i % 2 == 0 ? p : q).apiUrl(), apiToken, id));
    }
    for (TaskReader r : readers.values()) {
      r.awaitWord(GATE_1, Duration.ofSeconds(120));
    }

    // 1. The path from runner 1 to P goes silent.
    List<RunnerProcess> onP =
        runners.stream().filter(r -> r.connectedUrl().equals(viaProxy)).toList();
    assertFalse(onP.isEmpty(), "runner-1 is connected through the proxy");
    long silenced = System.nanoTime();
    proxy.stall();
    Files.writeString(gate1, "open\n");
    recovered("a silent path to " + p.name, silenced, viaProxy, onP, readers);
    for (TaskReader r : readers.values()) {
      r.awaitWord(GATE_2, Duration.ofSeconds(120));
    }

    // 2. The brain's node freezes.
    List<RunnerProcess> onB =
        runners.stream().filter(r -> r.connectedUrl().equals(b.runnerUrl())).toList();
    assertFalse(onB.isEmpty(), "runner-2 is on the brain's node");
    long beforeStall = maxOrdering();
    long frozen = System.nanoTime();
    signal("STOP", b);
    Files.writeString(gate2, "open\n");
    try {
      recovered("a frozen " + b.name, frozen, b.runnerUrl(), onB, readers);
    } finally {
      // The fault's length, not a wait for an outcome: B stays frozen FROZEN in all.
      long left = FROZEN.toMillis() - Duration.ofNanos(System.nanoTime() - frozen).toMillis();
      if (left > 0) {
        Thread.sleep(left);
      }
    }
    long beforeWake = maxOrdering();
    long woke = System.nanoTime();
    signal("CONT", b);
    for (TaskReader r : readers.values()) {
      r.reportAfter(woke, Duration.ofSeconds(120));
    }
    Await.until(() -> !b.alive(), Duration.ofSeconds(60), b.name + " stops once woken");
    assertTrue(p.alive() && q.alive(), "the survivors are still up");
    assertFalse(
        said(b, "writes its held entries"), b.name + " released no held write after it woke");
    assertNoWriteByTheFrozenNode(beforeStall, beforeWake);

    HubApiClient onQ = apiOn(q, apiToken);
    HubApiClient onPApi = apiOn(p, apiToken);
    for (Map.Entry<String, TaskReader> e : readers.entrySet()) {
      List<HubApiClient.Sse> events = e.getValue().awaitReport(Duration.ofSeconds(60));
      HubApiClient.assertContiguous(events);
      JsonNode report = events.get(events.size() - 1).data();
      assertEquals("done", report.path("status").asText(), e.getKey() + ": " + report);
      assertEquals(
          1, events.stream().filter(ev -> ev.event().equals("report")).count(), e.getKey());
      StringBuilder streamed = new StringBuilder();
      events.stream()
          .filter(ev -> ev.event().equals("text") && ev.data().has("delta"))
          .forEach(ev -> streamed.append(ev.data().get("delta").asText()));
      assertEquals(expectedText(), streamed.toString(), e.getKey() + ": every word once, in order");
      assertEquals(events, onQ.follow(e.getKey(), 0), e.getKey() + " read on " + q.name);
      assertEquals(events, onPApi.follow(e.getKey(), 0), e.getKey() + " read on " + p.name);
    }
  }

  /**
   * Asserts that every runner of {@code affected} connected to another URL than {@code goneUrl},
   * and every task applied frames again, within {@link #WITHIN} of {@code since}; prints both.
   */
  private void recovered(
      String fault,
      long since,
      String goneUrl,
      List<RunnerProcess> affected,
      Map<String, TaskReader> readers)
      throws InterruptedException {
    List<Long> back = new ArrayList<>();
    for (RunnerProcess r : affected) {
      back.add(r.awaitConnectedAfter(since, goneUrl, Duration.ofSeconds(60)));
    }
    List<Long> perTask = new ArrayList<>();
    for (TaskReader r : readers.values()) {
      perTask.add(r.firstEventAfter(since, Duration.ofSeconds(60)));
    }
    long slowestRunner = back.stream().mapToLong(Long::longValue).max().orElseThrow();
    long slowestTask = perTask.stream().mapToLong(Long::longValue).max().orElseThrow();
    System.out.printf(
        "%s: runners connected elsewhere after %s ms; every task applied frames again %d ms after"
            + " the fault (goal %d); first event per task %s ms%n",
        fault, back, slowestTask, WITHIN.toMillis(), perTask);
    assertTrue(
        slowestRunner <= WITHIN.toMillis(),
        fault + ": a runner connected elsewhere only after " + slowestRunner + " ms");
    assertTrue(
        slowestTask <= WITHIN.toMillis(),
        fault + ": every task applied frames again only after " + slowestTask + " ms");
  }

  /**
   * No task entity of the frozen node wrote after it woke. Its entities were frozen through the
   * stall, while every task applied frames again within it (asserted before), so each task entity
   * that lived on a survivor, or was started there anew, wrote during the stall or under a writer
   * id never seen before it; a writer that wrote before the stall, not during it, and again after
   * the wake can only be an entity of the woken node.
   */
  private void assertNoWriteByTheFrozenNode(long beforeStall, long beforeWake) throws Exception {
    Set<String> before = writers("ordering <= " + beforeStall);
    Set<String> during = writers("ordering > " + beforeStall + " AND ordering <= " + beforeWake);
    Set<String> after = writers("ordering > " + beforeWake);
    Set<String> frozenOnly = new HashSet<>(before);
    frozenOnly.removeAll(during);
    frozenOnly.retainAll(after);
    System.out.printf(
        "task entity writers: %d before the stall, %d during it, %d after the wake%n",
        before.size(), during.size(), after.size());
    assertFalse(after.isEmpty(), "tasks still wrote after the wake: the check looked at something");
    assertTrue(frozenOnly.isEmpty(), "writers that woke with the frozen node: " + frozenOnly);
  }

  private Set<String> writers(String where) throws Exception {
    Set<String> out = new HashSet<>();
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password());
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT DISTINCT writer FROM public.event_journal WHERE persistence_id LIKE"
                        + " 'Task|%' AND "
                        + where)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  private long maxOrdering() throws Exception {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password());
        ResultSet rs =
            c.createStatement().executeQuery("SELECT max(ordering) FROM public.event_journal")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The node whose log says the project's brain started there. */
  private HubProcess brainNode() throws Exception {
    HubProcess[] found = new HubProcess[1];
    Await.until(
        () -> {
          for (HubProcess hub : hubs) {
            if (said(hub, "the hub's brain starts here")) {
              found[0] = hub;
              return true;
            }
          }
          return false;
        },
        Duration.ofSeconds(60),
        "a node starts the brain");
    return found[0];
  }

  private static boolean said(HubProcess hub, String text) {
    try {
      return Files.readString(hub.log).contains(text);
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** Whether the API answers {@code path} with 200 now (503 while the brain starts). */
  private static boolean answers(HubApiClient api, String path) {
    try {
      api.get(path);
      return true;
    } catch (Exception | AssertionError e) {
      return false;
    }
  }

  private RunnerProcess runner(String name, String id, ProjectTokens tokens, String... urls)
      throws Exception {
    Path token =
        Files.writeString(
            work.resolve(id + ".token"),
            tokens.issue(PROJECT, Optional.of(id), Duration.ofMinutes(30)));
    return RunnerProcess.start(
        name, work, RUNNER_JVM, String.join(",", urls), token, work.resolve("capsules"));
  }

  private static HubApiClient apiOn(HubProcess hub, String token) {
    return new HubApiClient(hub.apiUrl(), token);
  }

  /** {@code kill -SIG pid}, through the kill binary by its full path. */
  private static void signal(String sig, HubProcess hub) throws Exception {
    Process k = new ProcessBuilder("/bin/kill", "-" + sig, Long.toString(hub.pid())).start();
    assertTrue(k.waitFor(10, TimeUnit.SECONDS), "kill -" + sig + " returned");
  }

  private static String expectedText() {
    StringBuilder s = new StringBuilder();
    for (int i = 1; i <= WORDS; i++) {
      s.append(i == 1 ? "" : " ").append("w").append(i);
    }
    return s.toString();
  }

  /**
   * Streams words 1..10, waits for gate 1, streams 11..25 0.1 s apart (the silent path falls
   * mid-stream), waits for gate 2, streams 26..40 1 s apart (so tasks still write after the frozen
   * node wakes, which gives {@link #assertNoWriteByTheFrozenNode} something to look at), then the
   * whole text as the result.
   */
  private static String streamingHarness(Path gate1, Path gate2) {
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
        + "    sleep $3\n"
        + "  done\n"
        + "}\n"
        + "emit 1 "
        + GATE_1
        + " 0\n"
        + "while [ ! -e '"
        + gate1
        + "' ]; do sleep 0.3; done\n"
        + "emit "
        + (GATE_1 + 1)
        + " "
        + GATE_2
        + " 0.1\n"
        + "while [ ! -e '"
        + gate2
        + "' ]; do sleep 0.3; done\n"
        + "emit "
        + (GATE_2 + 1)
        + " "
        + WORDS
        + " 1\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$text\"\n";
  }

  /** The hub and runner logs to {@code target/hub-cluster-stall-logs}: the temp dir goes. */
  private void keepLogs() throws java.io.IOException {
    Path keep = Files.createDirectories(Path.of("target", "hub-cluster-stall-logs"));
    for (HubProcess hub : hubs) {
      Files.copy(hub.log, keep.resolve(hub.log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
    for (RunnerProcess r : runners) {
      Files.copy(r.log, keep.resolve(r.log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
  }
}
