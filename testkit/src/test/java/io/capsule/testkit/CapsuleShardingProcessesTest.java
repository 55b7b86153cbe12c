package io.capsule.testkit;

import static io.capsule.testkit.ShardedRuns.awaitHost;
import static io.capsule.testkit.ShardedRuns.events;
import static io.capsule.testkit.ShardedRuns.hostOf;
import static io.capsule.testkit.ShardedRuns.outcome;
import static io.capsule.testkit.ShardedRuns.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.capsule.runtime.javadsl.CapsuleSharding;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sharded runs across separate JVMs: this JVM is the caller node (no runner role); two runner nodes
 * are their own {@code java} processes ({@link ClusterNodeMain}). The one hosting a run is killed
 * with SIGKILL mid-run; the run, asked to retry on node loss, completes on the other process with
 * one outcome. Takes about 90 s on the shared 2-core machine (measured 93 s): two JVM start-ups
 * under load, the 5 s harness twice, and about 10 s until the split-brain resolver downs the killed
 * node. It runs in the ordinary suite; move it behind a profile if that grows.
 */
class CapsuleShardingProcessesTest {

  @TempDir Path dir;

  @Test
  void aRunWhoseRunnerProcessIsKilledCompletesOnTheOtherProcessOnce() throws Exception {
    Map<String, Process> runners = new HashMap<>();
    try (CapsuleClusterKit cluster = CapsuleClusterKit.start(List.of(Set.of()))) {
      CapsuleSharding caller =
          new ShardedRuns(dir).init(cluster, "far", Duration.ofSeconds(5), 4).get(0);
      String seed = Cluster.get(cluster.node(0)).selfMember().address().toString();
      for (String label : List.of("p1", "p2")) {
        runners.put(label, spawn(seed, label));
      }
      cluster.awaitUp(3);

      TestProbe<RunEvent> probe = TestProbe.create(cluster.node(0));
      caller.start(request("far").retryOnNodeLoss(1), probe.ref());
      String first = awaitHost(probe);
      runners.get(first).destroyForcibly().waitFor(30, TimeUnit.SECONDS);

      List<RunEvent> all = events(probe);
      RunOutcome done = outcome(all);
      assertEquals(RunStatus.DONE, done.status(), done.message());
      assertEquals(
          1, all.stream().filter(e -> e instanceof RunEvent.AttemptLost).count(), "one lost");
      String second =
          hostOf(
              all.stream()
                  .filter(e -> e instanceof RunEvent.TextCompleted)
                  .findFirst()
                  .orElseThrow());
      assertNotEquals(first, second);
      assertEquals(java.util.Optional.of("done on " + second), done.result());
    } finally {
      for (Process p : runners.values()) {
        p.getOutputStream().close(); // a graceful stop for the survivor
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      }
    }
  }

  private Process spawn(String seed, String label) throws IOException {
    Path log = dir.resolve(label + ".log");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(
                java.toString(),
                "-cp",
                System.getProperty("java.class.path"),
                ClusterNodeMain.class.getName(),
                seed,
                label,
                dir.toString(),
                "5000")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!p.isAlive() && Files.exists(log)) {
      throw new IllegalStateException(label + " exited: " + Files.readString(log));
    }
    return p;
  }
}
