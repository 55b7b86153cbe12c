package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCancelTest {

  private static final Duration MAX = Duration.ofSeconds(30);
  private static final String WORKING = "{\"type\":\"text\",\"value\":\"working\"}";
  private ActorTestKit kit;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start(@TempDir Path workRoot) throws Exception {
    kit = ActorTestKit.create();
    root = workRoot; // deleted after the class, run directories and all
    fx = new RunFixture(kit, RunFixture.limits(root).withInterruptGrace(Duration.ofMillis(1500)));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  /** Starts the run, waits until the harness said "working", cancels, returns every event. */
  private List<RunEvent> cancelMidTurn(CapsuleRef ref) {
    TestProbe<RunEvent> probe = kit.createTestProbe();
    RunHandle h = fx.runtime.start(fx.request(ref, "t"), probe.ref());
    List<RunEvent> events = new ArrayList<>();
    while (true) {
      RunEvent e = probe.receiveMessage(MAX);
      events.add(e);
      if (e instanceof RunEvent.TextCompleted t && t.text().equals("working")) {
        break;
      }
    }
    h.cancel("stop");
    events.addAll(RunFixture.events(probe, MAX));
    return events;
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({
    // method,       keep stdin, harness behaviour, interrupt delivered, harness killed
    "SIGNAL_INT,     false,      !cancel-on-int,    true,                false",
    "STDIN_MESSAGE,  true,       !wait-interrupt,   true,                false",
    "UNSUPPORTED,    false,      !hang,             false,               true",
    "STDIN_MESSAGE,  false,      !hang,             false,               true",
    "SIGNAL_INT,     false,      !ignore-int,       true,                true",
  })
  void aCancelMidTurnInterruptsByTheDriversMethodAndTheOutcomeIsCanceled(
      InterruptMethod method,
      boolean keepStdin,
      String behaviour,
      boolean delivered,
      boolean killed)
      throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    List<String> lines = new ArrayList<>(List.of("!pid " + pid));
    lines.add(behaviour.equals("!ignore-int") ? "!ignore-int" : "!cancel-on-int");
    lines.add(WORKING);
    lines.add(
        behaviour.equals("!ignore-int") || behaviour.equals("!cancel-on-int")
            ? "!hang"
            : behaviour);
    if (behaviour.equals("!cancel-on-int")) {
      lines.set(1, "!cancel-on-int");
    }
    CapsuleRef ref = fx.scenario(lines, method, keepStdin, b -> b);
    List<RunEvent> events = cancelMidTurn(ref);
    RunOutcome o = RunFixture.outcome(events);
    assertEquals(RunStatus.FAILED, o.status());
    assertEquals("canceled", o.failureType().orElseThrow());
    assertTrue(o.canceled());
    assertTrue(
        RunFixture.only(events, RunEvent.StateChanged.class).stream()
            .anyMatch(s -> s.phase() == io.capsule.runtime.javadsl.RunPhase.INTERRUPTING));
    RunFixture.assertDead(pid);
    fx.assertNoFilesDirLeft();
    assertEquals(delivered || !killed, !killed || delivered, "table is consistent");
  }

  @Test
  void aCancelBeforeTheSpawnSpawnsNothingAndEndsCanceled() throws Exception {
    // A version probe that never answers holds the run before its launch.
    CompletableFuture<Optional<String>> never = new CompletableFuture<>();
    EmbeddedRuntime held =
        EmbeddedRuntime.create(
            kit.system(),
            RunFixture.limits(root),
            EmbeddedRuntime.noFolderDrivers(),
            Optional.of((b, a, e, w) -> never));
    RunFixture local = new RunFixture(kit, RunFixture.limits(root), held);
    Path marker = Files.createTempFile(root, "spawned-", ".txt");
    Files.delete(marker);
    CapsuleRef ref = local.scenario("!pid " + marker, WORKING);
    PlayDriver.LAUNCHES.clear();
    TestProbe<RunEvent> probe = kit.createTestProbe();
    RunHandle h = held.start(local.request(ref, "t"), probe.ref());
    probe.fishForMessage(
        MAX,
        e ->
            e instanceof RunEvent.StateChanged s
                    && s.phase() == io.capsule.runtime.javadsl.RunPhase.STARTING
                ? org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes.complete()
                : org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes.continueAndIgnore());
    h.cancel();
    RunOutcome o = RunFixture.outcome(RunFixture.events(probe, MAX));
    assertEquals("canceled", o.failureType().orElseThrow());
    assertEquals(o, h.outcome().toCompletableFuture().get(5, TimeUnit.SECONDS));
    assertTrue(PlayDriver.LAUNCHES.isEmpty(), "launch was never called");
    assertTrue(Files.notExists(marker), "no harness was spawned");
  }

  @Test
  void aRunAsASourceEmitsEveryEventAndCompletesAfterTheOutcome() throws Exception {
    CapsuleRef ref = fx.scenario(WORKING, "{\"type\":\"turn-end\",\"value\":\"r\"}");
    Pair<RunHandle, CompletableFuture<List<RunEvent>>> run =
        fx.runtime
            .source(fx.request(ref, "t"))
            .toMat(Sink.seq(), (h, f) -> Pair.create(h, f.toCompletableFuture()))
            .run(kit.system());
    List<RunEvent> events = run.second().get(30, TimeUnit.SECONDS);
    RunOutcome o = RunFixture.outcome(events);
    assertEquals("r", o.result().orElseThrow());
    assertEquals(o, run.first().outcome().toCompletableFuture().get(5, TimeUnit.SECONDS));
  }

  @Test
  void twoHundredConcurrentRunsInOneSystemEachReportExactlyOnce() throws Exception {
    CapsuleRef ref = fx.scenario(WORKING, "{\"type\":\"turn-end\",\"value\":\"r\"}");
    TestProbe<RunEvent> probe = kit.createTestProbe();
    List<RunHandle> handles = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      handles.add(fx.runtime.start(RunRequest.of("many-" + i, ref, "t" + i), probe.ref()));
    }
    java.util.Map<String, Integer> reports = new java.util.HashMap<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
    while (reports.size() < 200) {
      RunEvent e =
          probe.receiveMessage(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
      if (e instanceof RunEvent.Finished f) {
        reports.merge(f.taskId(), 1, Integer::sum);
        assertEquals(RunStatus.DONE, f.outcome().status(), f.outcome().toString());
      }
    }
    probe.expectNoMessage(Duration.ofMillis(300));
    assertEquals(200, reports.size());
    assertTrue(reports.values().stream().allMatch(n -> n == 1));
    for (RunHandle h : handles) {
      assertEquals(
          RunStatus.DONE, h.outcome().toCompletableFuture().get(5, TimeUnit.SECONDS).status());
    }
    fx.assertNoFilesDirLeft();
  }
}
