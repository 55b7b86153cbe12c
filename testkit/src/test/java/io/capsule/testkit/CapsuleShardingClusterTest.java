package io.capsule.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.Manifest;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.CapsuleSharding;
import io.capsule.runtime.javadsl.CapsuleShardingSettings;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Capsule runs sharded over a real Pekko Cluster: several ActorSystems in this JVM on 127.0.0.1
 * (Artery TCP, free ports), real harness processes (shell scripts), real node loss.
 */
class CapsuleShardingClusterTest {

  private static final String RUNNER = "capsule-runner";
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final AtomicInteger TASKS = new AtomicInteger();

  @TempDir Path dir;

  /**
   * Inits sharding on every live node; on each runner node registers capsule {@code name} whose
   * harness says which node it runs on, waits {@code pause}, and ends the turn.
   */
  private List<CapsuleSharding> init(
      CapsuleClusterKit cluster, String name, Duration pause, int maxConcurrent) {
    List<CapsuleSharding> all = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      ActorSystem<Void> node = cluster.node(i);
      if (node.whenTerminated().isCompleted()) {
        all.add(null);
        continue;
      }
      all.add(initNode(node, "n" + i, name, pause, maxConcurrent));
    }
    return all;
  }

  private CapsuleSharding initNode(
      ActorSystem<Void> node, String label, String name, Duration pause, int maxConcurrent) {
    RunLimits limits =
        RunLimits.defaults(dir.resolve("runs-" + label)).withInterruptGrace(Duration.ofSeconds(1));
    CapsuleShardingSettings settings =
        CapsuleShardingSettings.from(
                node.settings().config(), limits, EmbeddedRuntime.noFolderDrivers())
            .withMaxConcurrent(maxConcurrent)
            .withSlotWait(Duration.ofSeconds(120), 1000);
    CapsuleSharding sharding = CapsuleSharding.init(node, settings);
    if (sharding.hostsRuns()) {
      register(sharding, label, name, pause);
    }
    return sharding;
  }

  private void register(CapsuleSharding sharding, String label, String name, Duration pause) {
    try {
      Path harness =
          HarnessScript.builder()
              .out("{\"type\":\"text\",\"value\":\"on " + label + "\"}")
              .sleep(pause)
              .out("{\"type\":\"turn-end\",\"value\":\"done on " + label + "\"}")
              .exit(0)
              .build()
              .writeShellScript(dir.resolve(name + "-" + label + ".sh"));
      ScriptedDriver.Builder driver =
          ScriptedDriver.builder(name, harness.toString())
              .plan(ScriptedDriver.Builder.plan(List.of()));
      Manifest manifest =
          Manifest.builder(name, "0.1.0")
              .builtinDriver(name, "0.1.0")
              .command(harness.toString())
              .envAllow("PATH")
              .build();
      sharding
          .register(name, manifest, driver::build)
          .toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static RunRequest request(String capsule) {
    return RunRequest.of(
        "task-" + TASKS.incrementAndGet(), new CapsuleRef.Registered(capsule), "go");
  }

  /** Every event up to and including the one Finished; then nothing more. */
  private static List<RunEvent> events(TestProbe<RunEvent> probe) {
    List<RunEvent> all = new ArrayList<>();
    while (true) {
      RunEvent e = probe.receiveMessage(WAIT);
      all.add(e);
      if (e instanceof RunEvent.Finished) {
        probe.expectNoMessage(Duration.ofMillis(300));
        return all;
      }
    }
  }

  private static RunOutcome outcome(List<RunEvent> events) {
    assertEquals(
        1, events.stream().filter(e -> e instanceof RunEvent.Finished).count(), "one outcome");
    return ((RunEvent.Finished) events.get(events.size() - 1)).outcome();
  }

  private static String hostOf(RunEvent e) {
    return ((RunEvent.TextCompleted) e).text().substring("on ".length());
  }

  private static String awaitHost(TestProbe<RunEvent> probe) {
    return hostOf(
        probe
            .fishForMessage(
                WAIT,
                e ->
                    e instanceof RunEvent.TextCompleted
                        ? org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes.complete()
                        : org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes
                            .continueAndIgnore())
            .get(0));
  }

  @Test
  void aRunStartedOnANodeWithoutTheRoleRunsOnARunnerAndACancelFromAThirdNodeEndsIt() {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(List.of(Set.of(), Set.of(RUNNER), Set.of()))) {
      List<CapsuleSharding> s = init(cluster, "slow", Duration.ofSeconds(60), 4);
      assertFalse(s.get(0).hostsRuns());
      TestProbe<RunEvent> probe = TestProbe.create(cluster.node(0));
      RunRequest req = request("slow");
      RunHandle handle = s.get(0).start(req, probe.ref());
      assertEquals("n1", awaitHost(probe), "the only runner node hosts it");

      s.get(2).cancel(req.taskId(), "from the third node");
      RunOutcome o = handle.outcome().toCompletableFuture().join();
      assertTrue(o.canceled(), o.toString());
      assertTrue(o.message().contains("from the third node"), o.message());
      List<RunEvent> rest = events(probe);
      assertEquals(o, outcome(rest));
    }
  }

  @Test
  void losingTheHostingNodeEndsTheRunOnceWithNodeLostOrRetriesItElsewhere() {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(
            List.of(Set.of(), Set.of(RUNNER), Set.of(RUNNER), Set.of(RUNNER)))) {
      List<CapsuleSharding> s = init(cluster, "pause", Duration.ofSeconds(4), 4);

      // Without retry: the node dies mid-run, the caller hears E-CLU-001 once.
      TestProbe<RunEvent> lost = TestProbe.create(cluster.node(0));
      s.get(0).start(request("pause"), lost.ref());
      String host = awaitHost(lost);
      cluster.stopAbruptly(Integer.parseInt(host.substring(1)));
      List<RunEvent> events = events(lost);
      RunOutcome o = outcome(events);
      assertEquals(RunStatus.FAILED, o.status());
      assertEquals(Optional.of("E-CLU-001"), o.code(), o.message());

      // With one retry: the next host dies too; the run starts again and completes, once.
      TestProbe<RunEvent> retried = TestProbe.create(cluster.node(0));
      s.get(0).start(request("pause").retryOnNodeLoss(1), retried.ref());
      String first = awaitHost(retried);
      cluster.stopAbruptly(Integer.parseInt(first.substring(1)));
      List<RunEvent> all = events(retried);
      RunOutcome done = outcome(all);
      assertEquals(RunStatus.DONE, done.status(), done.message());
      List<RunEvent.AttemptLost> marks =
          all.stream()
              .filter(e -> e instanceof RunEvent.AttemptLost)
              .map(e -> (RunEvent.AttemptLost) e)
              .toList();
      assertEquals(1, marks.size(), "one lost attempt marked");
      assertEquals(1, marks.get(0).attempt());
      assertEquals("E-CLU-001", marks.get(0).code());
      String second =
          hostOf(
              all.stream()
                  .filter(e -> e instanceof RunEvent.TextCompleted)
                  .findFirst()
                  .orElseThrow());
      assertFalse(second.equals(first), "ran again on another node");
      assertEquals(Optional.of("done on " + second), done.result());
    }
  }
}
