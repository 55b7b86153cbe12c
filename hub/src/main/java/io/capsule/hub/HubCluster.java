package io.capsule.hub;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * The hub always runs as a Pekko Cluster, so that tasks are sharded from the start: one node is a
 * cluster of one that joins itself; N nodes are the same code with seed nodes in the settings.
 */
public final class HubCluster {
  private HubCluster() {}

  /**
   * A node of its own on loopback: Artery TCP on 127.0.0.1 and a free port (nothing else needs to
   * reach it), the split-brain resolver as the downing provider (what a real cluster runs, so one
   * node and N nodes differ only in seeds), and no JMX bean (several hubs in one test JVM would
   * collide on its name).
   */
  public static Config singleNode() {
    return ConfigFactory.parseString(
        """
        pekko.actor.provider = cluster
        pekko.remote.artery.transport = tcp
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.downing-provider-class = "org.apache.pekko.cluster.sbr.SplitBrainResolverProvider"
        pekko.cluster.jmx.enabled = off
        pekko.cluster.seed-nodes = []
        """);
  }

  /**
   * Joins the node to itself when no seed nodes are configured (a cluster of one); with seeds Pekko
   * joins them on its own. Returns at once: sharding buffers messages until the node is up.
   */
  public static void joinSelfIfAlone(ActorSystem<?> system) {
    if (system.settings().config().getStringList("pekko.cluster.seed-nodes").isEmpty()) {
      Cluster cluster = Cluster.get(system);
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
    }
  }
}
