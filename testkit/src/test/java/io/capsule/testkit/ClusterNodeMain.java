package io.capsule.testkit;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * A runner node in its own JVM, for {@code CapsuleShardingProcessesTest}: {@code ClusterNodeMain
 * SEED LABEL DIR PAUSE_MS}. It starts a node with the runner role, inits {@code CapsuleSharding},
 * registers capsule {@code far} (a harness that says {@code on LABEL}, waits, and ends the turn),
 * joins the seed, and runs until its stdin closes (or it is killed, which is the point).
 */
public final class ClusterNodeMain {
  private ClusterNodeMain() {}

  public static void main(String[] args) throws IOException {
    ActorSystem<Void> system =
        ActorSystem.create(
            Behaviors.empty(),
            CapsuleClusterKit.SYSTEM_NAME,
            CapsuleClusterKit.nodeConfig(Set.of(ShardedRuns.RUNNER))
                .withFallback(ConfigFactory.load()));
    new ShardedRuns(Path.of(args[2]))
        .initNode(system, args[1], "far", Duration.ofMillis(Long.parseLong(args[3])), s -> s);
    Cluster.get(system).manager().tell(Join.create(AddressFromURIString.parse(args[0])));
    while (System.in.read() >= 0) {
      // the test closes stdin to stop this node gracefully
    }
    system.terminate();
  }
}
