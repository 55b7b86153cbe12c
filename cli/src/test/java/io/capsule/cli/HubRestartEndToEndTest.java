package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code capsule hub --state-dir} as a real process, killed with SIGKILL in the middle of a run and
 * started again on the same port and directory, with a runner (in this JVM) that keeps working
 * through the outage: the task's events come out 1..n with no gap and no repeat across both hub
 * processes, the report arrives once, and a cancel sent by the restarted hub still reaches the run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class HubRestartEndToEndTest {
  private static final String PROJECT = "demo";

  @TempDir static Path work;

  private Path capsules;
  private Path state;
  private Path secret;
  private Path gate;
  private Path finished;
  private int port;
  private Process hubProcess;
  private final List<String> hubOutput = new ArrayList<>();
  private ActorSystem<Void> runnerSystem;
  private RunnerNode runner;
  private HubApiClient api;
  private String token; // the runner's
  private String apiToken; // the task API's

  @BeforeAll
  void start() throws Exception {
    capsules = Files.createDirectories(work.resolve("capsules"));
    state = work.resolve("state");
    secret =
        Files.writeString(work.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    gate = fifo("gate");
    finished = fifo("finished");
    TestCapsules.capsule(capsules, "paced", pacedHarness(gate, finished));
    TestCapsules.capsule(capsules, "slow", TestCapsules.slowHarness());
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort(); // the hub must come back on the port the runner dials
    }
    hubProcess = startHub();
    ProjectTokens tokens = new ProjectTokens(Files.readAllBytes(secret), Duration.ofSeconds(30));
    token = tokens.issue(PROJECT, Optional.empty(), Duration.ofMinutes(30));
    apiToken = tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(30));
    api = new HubApiClient("http://127.0.0.1:" + port, apiToken);
    startRunner();
  }

  /** A runner in its own actor system, returned once connected. */
  private void startRunner() throws Exception {
    // Redial within half a second, so the runner is back soon after the hub is. Uncontained:
    // the paced harness talks to this test through FIFOs in the test's temp dir, which a
    // contained harness (private /tmp) cannot see; containment has its own tests.
    CapsuleSettings settings =
        CapsuleSettings.from(
            ConfigFactory.parseString(
                    "capsule.protocol.reconnect { min-backoff = 100ms, max-backoff = 500ms }\n"
                        + "capsule.harness.containment = off")
                .withFallback(ConfigFactory.load()));
    runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
    runner =
        TestCapsules.connectedRunner(
            runnerSystem,
            settings,
            "ws://127.0.0.1:" + port + "/v1/runner",
            PROJECT,
            token,
            capsules,
            n -> {});
  }

  /** The runner's process ends: its connection, its runs and their harnesses go with it. */
  private void stopRunner() throws Exception {
    RunnerNode stopping = runner;
    ActorSystem<Void> its = runnerSystem;
    runner = null; // stopped once: @AfterAll must not wait on a runner whose system is gone
    runnerSystem = null;
    stopping.close();
    its.terminate();
    its.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @AfterAll
  void stop() throws Exception {
    if (runner != null) {
      runner.close();
    }
    if (runnerSystem != null) {
      runnerSystem.terminate();
      runnerSystem.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    if (hubProcess != null) {
      hubProcess.destroy();
      hubProcess.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void killingTheHubMidRunLosesNothingAndRepeatsNothing() throws Exception {
    api.submit("{\"capsule\":\"paced\",\"goal\":\"count\",\"id\":\"t-paced\"}");
    // The harness streams 100 words, then waits at the gate: the hub dies mid-run.
    List<HubApiClient.Sse> before = api.follow("t-paced", 0, id -> id >= 60);
    assertTrue(before.size() >= 60, "the first hub streamed the run's start: " + before.size());
    killHub();

    // No hub: the run goes on (100 more words and the result) and the runner keeps it all.
    Files.writeString(gate, "go\n"); // blocks until the harness reads the gate
    assertEquals("finished\n", Files.readString(finished)); // it printed everything

    hubProcess = startHub();
    List<String> said = hubSaid(); // the hub's output thread still appends: read a copy
    assertTrue(
        said.stream().anyMatch(l -> l.contains("restored")),
        "the hub says what it restored: " + said);
    JsonNode listed = null;
    for (JsonNode t : api.get("/v1/tasks")) {
      listed = t.get("id").asText().equals("t-paced") ? t : listed;
    }
    assertTrue(listed != null, "the restarted hub lists the task from before");
    assertEquals("paced", listed.get("capsule").asText());
    assertTrue(listed.get("events").asInt() >= before.size(), listed.toString());
    long last = before.get(before.size() - 1).id();
    List<HubApiClient.Sse> after = api.follow("t-paced", last);
    List<HubApiClient.Sse> all = new ArrayList<>(before);
    all.addAll(after);
    HubApiClient.assertContiguous(all);

    JsonNode report = all.get(all.size() - 1).data();
    assertEquals("done", report.get("status").asText());
    StringBuilder streamed = new StringBuilder();
    all.stream()
        .filter(e -> e.event().equals("text") && e.data().has("delta"))
        .forEach(e -> streamed.append(e.data().get("delta").asText()));
    assertEquals(report.get("summary_business").asText(), streamed.toString());
    assertEquals(200, streamed.toString().split(" ").length, "every word once");

    // The restarted hub holds the whole history: a new reader from 0 sees the same events.
    assertEquals(all, api.follow("t-paced", 0));
    JsonNode task = api.get("/v1/tasks/t-paced");
    assertEquals("done", task.get("state").asText());
    assertEquals(all.size(), task.get("events").asInt());
  }

  @Test
  void aCancelFromTheRestartedHubReachesARunStartedBeforeTheKill() throws Exception {
    api.submit("{\"capsule\":\"slow\",\"goal\":\"take your time\",\"id\":\"t-slow-restart\"}");
    List<HubApiClient.Sse> before = api.follow("t-slow-restart", 0, id -> id >= 4);
    assertTrue(before.size() >= 4, "running, and the harness has spoken: " + before);
    killHub();
    hubProcess = startHub();

    JsonNode cancel = api.post("/v1/tasks/t-slow-restart/cancel");
    assertTrue(cancel.get("canceled").asBoolean(), cancel.toString());
    List<HubApiClient.Sse> all = api.follow("t-slow-restart", 0);
    HubApiClient.assertContiguous(all);
    JsonNode report = all.get(all.size() - 1).data();
    assertEquals("failed", report.get("status").asText());
    assertEquals("canceled", report.get("failure_type").asText());
    assertTrue(api.get("/v1/tasks/t-slow-restart").get("cancel_requested").asBoolean());
    assertTrue(
        TestCapsules.harnessesAlive("slow-harness-marker").isEmpty(),
        "the harness outlived its run");
  }

  @Test
  void aRestartedRunnerRunsTheTaskAgainAndTheHubKeepsBothRunsInOrder() throws Exception {
    api.submit("{\"capsule\":\"slow\",\"goal\":\"take your time\",\"id\":\"t-rerun\"}");
    List<HubApiClient.Sse> first = api.follow("t-rerun", 0, id -> id >= 4);
    assertTrue(first.size() >= 4, "running, and the harness has spoken: " + first);
    stopRunner();
    assertTrue(
        TestCapsules.harnessesAlive("slow-harness-marker").isEmpty(),
        "the harness went with its runner");
    startRunner(); // it says hello without the task: the hub delivers it again

    long last = first.get(first.size() - 1).id();
    List<HubApiClient.Sse> rerun = api.follow("t-rerun", last, api.cancelAt("t-rerun", last + 4));
    List<HubApiClient.Sse> all = new ArrayList<>(first);
    all.addAll(rerun);
    HubApiClient.assertContiguous(all);
    assertEquals(
        "accepted",
        rerun.get(0).data().path("phase").asText(),
        "the re-run's events follow the lost run's, from its start: " + rerun.get(0));
    JsonNode report = all.get(all.size() - 1).data();
    assertEquals("canceled", report.get("failure_type").asText());
  }

  // --- the hub process ---

  /** Where the hub process keeps its state: an H2 file under the work directory. */
  List<String> storeArgs() throws Exception {
    return List.of("--state-dir", state.toString());
  }

  private List<String> hubSaid() {
    synchronized (hubOutput) {
      return List.copyOf(hubOutput);
    }
  }

  /** Starts {@code capsule hub} and returns once it listens (it prints its URLs then). */
  private Process startHub() throws Exception {
    synchronized (hubOutput) {
      hubOutput.clear();
    }
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                CapsuleMain.class.getName(),
                "hub",
                "--listen",
                "127.0.0.1:" + port,
                "--project",
                PROJECT,
                "--secret-file",
                secret.toString()));
    command.addAll(storeArgs());
    Process p =
        new ProcessBuilder(command)
            .redirectError(ProcessBuilder.Redirect.appendTo(work.resolve("hub.log").toFile()))
            .start();
    CompletableFuture<Void> listening = new CompletableFuture<>();
    Thread drain =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                  synchronized (hubOutput) {
                    hubOutput.add(line);
                  }
                  if (line.contains("listening on")) {
                    listening.complete(null);
                  }
                }
              } catch (IOException e) {
                // the process is gone; whoever waits learns it below
              }
              listening.completeExceptionally(
                  new AssertionError("the hub exited before listening: " + whyHubEnded(p)));
            },
            "hub-stdout");
    drain.setDaemon(true);
    drain.start();
    listening.get(90, TimeUnit.SECONDS);
    return p;
  }

  /** The hub's exit value and the end of its log, so a failure explains itself in CI's output. */
  private String whyHubEnded(Process p) {
    String exit;
    try {
      exit = p.waitFor(10, TimeUnit.SECONDS) ? "exit " + p.exitValue() : "still running";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exit = "interrupted";
    }
    try {
      List<String> log = Files.readAllLines(work.resolve("hub.log"));
      return exit
          + "; hub.log ends:\n  "
          + String.join("\n  ", log.subList(Math.max(0, log.size() - 40), log.size()));
    } catch (IOException e) {
      return exit + "; no hub.log: " + e;
    }
  }

  /** SIGKILL: no shutdown hook, no close frames; whatever the hub had not written is gone. */
  private void killHub() throws InterruptedException {
    hubProcess.destroyForcibly();
    assertTrue(hubProcess.waitFor(30, TimeUnit.SECONDS));
    assertEquals(137, hubProcess.exitValue(), "killed by SIGKILL");
    // A new client: the old one's pooled connections went with the process, and Java's client
    // does not retry a POST sent on one of them (it failed once with "connection reset").
    api = new HubApiClient("http://127.0.0.1:" + port, apiToken);
  }

  private Path fifo(String name) throws Exception {
    Path p = work.resolve(name);
    Process mk = new ProcessBuilder("mkfifo", p.toString()).start();
    assertEquals(0, mk.waitFor());
    return p;
  }

  /**
   * Streams words 1..100, waits until the test opens the gate, streams 101..200 and the whole text
   * as the result, then tells the test through the second FIFO that it printed everything.
   */
  private static String pacedHarness(Path gate, Path finished) {
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
        + "  done\n"
        + "}\n"
        + "emit 1 100\n"
        + "read -r go < '"
        + gate
        + "'\n"
        + "emit 101 200\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$text\"\n"
        + "echo finished > '"
        + finished
        + "'\n";
  }
}
