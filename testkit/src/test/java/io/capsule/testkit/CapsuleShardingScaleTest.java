package io.capsule.testkit;

import static io.capsule.testkit.ShardedRuns.RUNNER;
import static io.capsule.testkit.ShardedRuns.WAIT;
import static io.capsule.testkit.ShardedRuns.awaitHost;
import static io.capsule.testkit.ShardedRuns.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.runtime.RunRequest;
import io.capsule.runtime.cluster.NodeSlots;
import io.capsule.runtime.cluster.RunEntity;
import io.capsule.runtime.javadsl.CapsuleSharding;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many sharded runs, full nodes, and runner nodes restarted one by one under load. */
class CapsuleShardingScaleTest {

  @TempDir Path dir;

  @Test
  void twoHundredRunsAcrossThreeNodesEachEndOnceAndNoneOnANodeWithoutTheRole() throws Exception {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(List.of(Set.of(), Set.of(RUNNER), Set.of(RUNNER)))) {
      List<CapsuleSharding> s =
          new ShardedRuns(dir).init(cluster, "quick", Duration.ofMillis(50), 4);
      // Each start's events go to a listener on the node that started it: a duplicate outcome
      // would show there (a handle's future completes only once and would hide it).
      List<TestProbe<RunEvent>> listeners = new ArrayList<>();
      for (int n = 0; n < 3; n++) {
        listeners.add(TestProbe.create(cluster.node(n)));
      }
      Set<String> tasks = new HashSet<>();
      for (int i = 0; i < 200; i++) {
        // Started from every node in turn, the one without the role included.
        RunRequest r = request("quick");
        tasks.add(r.taskId());
        s.get(i % 3).start(r, listeners.get(i % 3).ref());
      }
      Map<String, Integer> outcomesPerTask = new HashMap<>();
      Map<String, Integer> perNode = new TreeMap<>();
      for (int n = 0; n < 3; n++) {
        int started = (200 - n + 2) / 3; // starts i with i % 3 == n
        for (int seen = 0; seen < started; ) {
          RunEvent e = listeners.get(n).receiveMessage(WAIT.multipliedBy(5));
          if (e instanceof RunEvent.Finished f) {
            RunOutcome o = f.outcome();
            assertEquals(RunStatus.DONE, o.status(), o.message());
            outcomesPerTask.merge(o.taskId(), 1, Integer::sum);
            perNode.merge(o.result().orElseThrow().substring("done on ".length()), 1, Integer::sum);
            seen++;
          }
        }
      }
      for (TestProbe<RunEvent> l : listeners) {
        l.expectNoMessage(Duration.ofSeconds(1));
      }
      assertEquals(tasks, outcomesPerTask.keySet(), "every task ended");
      assertEquals(
          Set.of(1),
          Set.copyOf(outcomesPerTask.values()),
          "one outcome per task: " + outcomesPerTask);
      assertEquals(Set.of("n1", "n2"), perNode.keySet(), "only runner nodes ran: " + perNode);
      long granted = 0;
      for (int i = 1; i <= 2; i++) {
        NodeSlots.Stats stats =
            s.get(i).slotStats().orElseThrow().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(4, stats.peak(), "full at times, never above max-concurrent: " + stats);
        assertEquals(0, stats.held(), "every slot given back: " + stats);
        granted += stats.granted();
      }
      assertEquals(200, granted, "one slot, so one run, per task");
      assertEquals(Optional.empty(), s.get(0).slotStats(), "the caller-only node has no slots");
      // Each entity passivated once its outcome was delivered: no runner node keeps one.
      for (int i = 1; i <= 2; i++) {
        ActorSystem<Void> node = cluster.node(i);
        listeners
            .get(0)
            .awaitAssert(
                WAIT,
                () -> {
                  assertEquals(Set.of(), runEntities(node), node.address() + " hosts entities");
                  return null;
                });
      }
    }
  }

  /** The run entities a node hosts now (Pekko's shard region state). */
  private static Set<String> runEntities(ActorSystem<?> node) {
    TestProbe<ShardRegion.CurrentShardRegionState> state = TestProbe.create(node);
    ClusterSharding.get(node)
        .shardState()
        .tell(new GetShardRegionState(RunEntity.TYPE_KEY, state.ref()));
    Set<String> ids = new HashSet<>();
    for (ShardRegion.ShardState shard : state.receiveMessage(WAIT).getShards()) {
      ids.addAll(shard.getEntityIds());
    }
    return ids;
  }

  @Test
  void aFullNodeMakesAStartWaitBoundedAndRefusesBeyondItsQueue() throws Exception {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(List.of(Set.of(), Set.of(RUNNER), Set.of()))) {
      List<CapsuleSharding> s =
          new ShardedRuns(dir)
              .init(
                  cluster,
                  "busy",
                  Duration.ofSeconds(60),
                  x -> x.withMaxConcurrent(1).withSlotWait(Duration.ofSeconds(2), 1));
      TestProbe<RunEvent> first = TestProbe.create(cluster.node(0));
      RunHandle running = s.get(0).start(request("busy"), first.ref());
      assertEquals("n1", awaitHost(first));

      CompletableFuture<RunOutcome> waited =
          s.get(0).start(request("busy")).outcome().toCompletableFuture();
      // The queue (one place) is taken by the start above once it has reached the node.
      first.awaitAssert(
          WAIT,
          () -> {
            NodeSlots.Stats stats = s.get(1).slotStats().orElseThrow().toCompletableFuture().join();
            assertEquals(1, stats.waiting(), stats.toString());
            return null;
          });
      TestProbe<RunEvent> third = TestProbe.create(cluster.node(2));
      RunHandle refusedAtOnce = s.get(2).start(request("busy"), third.ref());
      RunOutcome atOnce = refusedAtOnce.outcome().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(Optional.of("E-CLU-002"), atOnce.code(), atOnce.message());
      assertTrue(atOnce.message().contains("wait for a slot"), atOnce.message());

      RunOutcome timedOut = waited.get(30, TimeUnit.SECONDS);
      assertEquals(Optional.of("E-CLU-002"), timedOut.code(), timedOut.message());
      assertTrue(timedOut.message().contains("freed within"), timedOut.message());

      running.cancel("done with it");
      assertTrue(running.outcome().toCompletableFuture().get(30, TimeUnit.SECONDS).canceled());
    }
  }

  @Test
  void aRollingRestartOfTheRunnerNodesWithRetryEndsEveryRunExactlyOnce() throws Exception {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(
            List.of(Set.of(), Set.of(RUNNER), Set.of(RUNNER), Set.of(RUNNER)))) {
      ShardedRuns runs = new ShardedRuns(dir);
      Duration pause = Duration.ofSeconds(6);
      List<CapsuleSharding> s = runs.init(cluster, "steady", pause, 8);
      List<TestProbe<RunEvent>> probes = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        TestProbe<RunEvent> p = TestProbe.create(cluster.node(0));
        RunRequest r = request("steady").retryOnNodeLoss(3);
        s.get(0).start(r, p.ref());
        probes.add(p);
      }
      for (TestProbe<RunEvent> p : probes) {
        awaitHost(p); // every run is going before the restart begins
      }
      // Replace n1 and n2, one at a time: leave gracefully, then a fresh runner joins.
      for (int old = 1; old <= 2; old++) {
        cluster.leave(old);
        var fresh = cluster.add(Set.of(RUNNER));
        runs.initNode(fresh, "n" + (cluster.size() - 1), "steady", pause, x -> x);
      }
      int retried = 0;
      for (TestProbe<RunEvent> p : probes) {
        List<RunEvent> events = new ArrayList<>();
        RunEvent e;
        do {
          e = p.receiveMessage(WAIT.multipliedBy(2));
          events.add(e);
        } while (!(e instanceof RunEvent.Finished));
        p.expectNoMessage(Duration.ofMillis(200));
        RunOutcome o = ShardedRuns.outcome(events);
        assertEquals(RunStatus.DONE, o.status(), o.message());
        if (events.stream().anyMatch(x -> x instanceof RunEvent.AttemptLost)) {
          retried++;
        }
      }
      assertTrue(retried > 0, "some run was on a restarted node and ran again");
    }
  }
}
