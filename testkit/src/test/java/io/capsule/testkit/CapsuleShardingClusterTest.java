package io.capsule.testkit;

import static io.capsule.testkit.ShardedRuns.RUNNER;
import static io.capsule.testkit.ShardedRuns.assertLostAttemptKeptAndMarked;
import static io.capsule.testkit.ShardedRuns.awaitHost;
import static io.capsule.testkit.ShardedRuns.events;
import static io.capsule.testkit.ShardedRuns.outcome;
import static io.capsule.testkit.ShardedRuns.recordUntilHost;
import static io.capsule.testkit.ShardedRuns.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.cluster.NodeSlots;
import io.capsule.runtime.javadsl.CapsuleSharding;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Capsule runs sharded over a real Pekko Cluster: several ActorSystems in this JVM on 127.0.0.1
 * (Artery TCP, free ports), real harness processes (shell scripts), real node loss.
 */
class CapsuleShardingClusterTest {

  @TempDir Path dir;

  @Test
  void aRunStartedOnANodeWithoutTheRoleRunsOnARunnerAndACancelFromAThirdNodeEndsIt()
      throws Exception {
    // The role is configured (capsule.sharding.role): node 0 has only the default role, so it is
    // a caller like node 2; node 1, with the configured role, is the only runner.
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(
            List.of(Set.of(RUNNER), Set.of("gpu-runner"), Set.of()),
            ConfigFactory.parseString("capsule.sharding.role = gpu-runner"))) {
      List<CapsuleSharding> s =
          new ShardedRuns(dir).init(cluster, "slow", Duration.ofSeconds(60), 4);
      assertEquals("gpu-runner", s.get(0).settings().role());
      assertFalse(s.get(0).hostsRuns(), "the default role is not the configured one");
      assertTrue(s.get(1).hostsRuns());
      assertFalse(s.get(2).hostsRuns());
      TestProbe<RunEvent> probe = TestProbe.create(cluster.node(0));
      RunRequest req = request("slow");
      RunHandle handle = s.get(0).start(req, probe.ref());
      assertEquals("n1", awaitHost(probe), "the only node with the configured role hosts it");

      s.get(2).cancel(req.taskId(), "from the third node");
      RunOutcome o = handle.outcome().toCompletableFuture().join();
      assertTrue(o.canceled(), o.toString());
      assertTrue(o.message().contains("from the third node"), o.message());
      List<RunEvent> rest = events(probe);
      assertEquals(o, outcome(rest));

      // The same task started again from another node while it runs: no second run; both
      // callers get its one outcome.
      new ShardedRuns(dir).register(s.get(1), "n1", "brief", Duration.ofSeconds(2));
      RunRequest same = request("brief");
      TestProbe<RunEvent> a = TestProbe.create(cluster.node(0));
      RunHandle first = s.get(0).start(same, a.ref());
      assertEquals("n1", awaitHost(a));
      TestProbe<RunEvent> b = TestProbe.create(cluster.node(2));
      RunHandle again = s.get(2).start(same, b.ref());
      RunOutcome once = first.outcome().toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertEquals(RunStatus.DONE, once.status(), once.message());
      assertEquals(once, again.outcome().toCompletableFuture().get(60, TimeUnit.SECONDS));
      NodeSlots.Stats stats =
          s.get(1).slotStats().orElseThrow().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertEquals(2, stats.granted(), "two tasks, two runs: " + stats);
    }
  }

  @Test
  void aStartNoRunnerNodeAnswersEndsWithNoRunnerOnceItsTimeoutRunsOut() throws Exception {
    try (CapsuleClusterKit cluster = CapsuleClusterKit.start(List.of(Set.of(), Set.of()))) {
      List<CapsuleSharding> s =
          new ShardedRuns(dir)
              .init(
                  cluster,
                  "nowhere",
                  Duration.ZERO,
                  x -> x.withStartTimeout(Duration.ofSeconds(3)));
      TestProbe<RunEvent> probe = TestProbe.create(cluster.node(1));
      s.get(1).start(request("nowhere"), probe.ref());
      List<RunEvent> events = events(probe);
      assertEquals(1, events.size(), "nothing but the outcome: " + events);
      RunOutcome o = outcome(events);
      assertEquals(Optional.of("E-CLU-003"), o.code(), o.message());
    }
  }

  @Test
  void losingTheHostingNodeEndsTheRunOnceWithNodeLostOrRetriesItElsewhere() {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(
            List.of(Set.of(), Set.of(RUNNER), Set.of(RUNNER), Set.of(RUNNER)))) {
      List<CapsuleSharding> s =
          new ShardedRuns(dir).init(cluster, "pause", Duration.ofSeconds(4), 4);

      // Without retry: the node dies mid-run, the caller hears E-CLU-001 once.
      TestProbe<RunEvent> lost = TestProbe.create(cluster.node(0));
      s.get(0).start(request("pause"), lost.ref());
      String host = awaitHost(lost);
      cluster.stopAbruptly(Integer.parseInt(host.substring(1)));
      List<RunEvent> events = events(lost);
      RunOutcome o = outcome(events);
      assertEquals(RunStatus.FAILED, o.status());
      assertEquals(Optional.of("E-CLU-001"), o.code(), o.message());

      // With one retry: the next host dies too; the run starts again and completes, once, with the
      // lost attempt's events kept and marked.
      TestProbe<RunEvent> retried = TestProbe.create(cluster.node(0));
      s.get(0).start(request("pause").retryOnNodeLoss(1), retried.ref());
      List<RunEvent> all = new ArrayList<>();
      String first = recordUntilHost(retried, all);
      int firstIndex = Integer.parseInt(first.substring(1));
      String firstAddress = Cluster.get(cluster.node(firstIndex)).selfMember().address().toString();
      cluster.stopAbruptly(firstIndex);
      all.addAll(events(retried));
      assertLostAttemptKeptAndMarked(all, first, firstAddress);
    }
  }
}
