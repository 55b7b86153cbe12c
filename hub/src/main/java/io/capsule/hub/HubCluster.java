package io.capsule.hub;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.settings.SettingsInvalid;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * The hub always runs as a Pekko Cluster, so that tasks are sharded from the start: one node is a
 * cluster of one that joins itself; N nodes are the same code with seed nodes in the settings
 * ({@link #member}).
 */
public final class HubCluster {
  private HubCluster() {}

  /**
   * A {@code host:port}: where a node's cluster transport (Artery TCP) listens.
   *
   * @param host a name or an address, as the other nodes reach it
   * @param port 1-65535
   */
  public record Endpoint(String host, int port) {
    public Endpoint {
      Objects.requireNonNull(host, "host");
      if (host.isBlank()) {
        throw new IllegalArgumentException("no host in the address");
      }
      if (port < 1 || port > 65_535) {
        throw new IllegalArgumentException("port " + port + " is not 1-65535");
      }
    }

    /**
     * {@code host:port}, an IPv6 address in brackets ({@code [::1]:2552}).
     *
     * @throws IllegalArgumentException saying what is wrong with {@code text}
     */
    public static Endpoint parse(String text) {
      String t = text == null ? "" : text.strip();
      int colon = t.lastIndexOf(':');
      if (colon < 1 || colon == t.length() - 1) {
        throw new IllegalArgumentException("'" + t + "' is not HOST:PORT");
      }
      String host = t.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      int port;
      try {
        port = Integer.parseInt(t.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("'" + t + "' has no numeric port");
      }
      try {
        return new Endpoint(host, port);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("'" + t + "': " + e.getMessage(), e);
      }
    }

    /** The Pekko address of the node of system {@code systemName} listening here. */
    String address(String systemName) {
      String h = host.contains(":") ? "[" + host + "]" : host;
      return "pekko://" + systemName + "@" + h + ":" + port;
    }
  }

  /**
   * How quickly the cluster gives up on a node that stopped answering: {@code
   * capsule.hub.cluster.*} (defaults and the reasons for them in the hub's reference.conf).
   *
   * @param heartbeatInterval how often a node sends each of its monitors a heartbeat
   * @param heartbeatPause the failure detector's acceptable heartbeat pause
   * @param stableAfter how long membership must be stable before the split-brain resolver downs the
   *     unreachable side
   * @param downRemovalMargin how long after downing the shards and singletons of a downed node
   *     start elsewhere
   */
  public record Failover(
      Duration heartbeatInterval,
      Duration heartbeatPause,
      Duration stableAfter,
      Duration downRemovalMargin) {
    /**
     * @throws SettingsInvalid {@code E-CFG-001} naming every value out of range
     */
    public Failover {
      List<Diagnostic> bad = new ArrayList<>();
      atLeast(heartbeatInterval, Duration.ofMillis(100), "heartbeat-interval", bad);
      atLeast(heartbeatPause, Duration.ofSeconds(1), "heartbeat-pause", bad);
      atLeast(stableAfter, Duration.ofSeconds(1), "stable-after", bad);
      atLeast(downRemovalMargin, Duration.ofMillis(1), "down-removal-margin", bad);
      if (bad.isEmpty() && heartbeatPause.compareTo(heartbeatInterval.multipliedBy(2)) < 0) {
        bad.add(
            Diagnostic.of(
                Code.E_CFG_001,
                "capsule.hub.cluster.heartbeat-pause ("
                    + heartbeatPause.toMillis()
                    + " ms) must be at least twice heartbeat-interval ("
                    + heartbeatInterval.toMillis()
                    + " ms): one late heartbeat must not make a node unreachable"));
      }
      if (!bad.isEmpty()) {
        throw new SettingsInvalid(bad);
      }
    }

    /**
     * From {@code capsule.hub.cluster} of {@code config}.
     *
     * @throws SettingsInvalid {@code E-CFG-001} for a missing, mistyped or out-of-range key
     */
    public static Failover fromConfig(Config config) {
      try {
        Config c = config.getConfig("capsule.hub.cluster");
        return new Failover(
            c.getDuration("heartbeat-interval"),
            c.getDuration("heartbeat-pause"),
            c.getDuration("stable-after"),
            c.getDuration("down-removal-margin"));
      } catch (ConfigException e) {
        throw new SettingsInvalid(List.of(Diagnostic.of(Code.E_CFG_001, e.getMessage())));
      }
    }

    /**
     * Roughly how long after a node dies its shards run elsewhere, the steps {@code
     * HubClusterKillTest} prints: the last heartbeat's interval, the detector's pause and its
     * threshold's margin (~0.5 s) until the node is unreachable; stable-after and up to one
     * resolver tick (1 s, fixed in Pekko) until it is downed; a leader action and a gossip round
     * trip (~0.5 s) until it is removed; the margin; the sharding coordinator's move and allocation
     * (~0.5 s).
     */
    public Duration expected() {
      return heartbeatInterval
          .plus(heartbeatPause)
          .plus(stableAfter)
          .plus(downRemovalMargin)
          .plusMillis(2_500);
    }

    private static void atLeast(Duration d, Duration min, String key, List<Diagnostic> bad) {
      if (d == null || d.compareTo(min) < 0) {
        bad.add(
            Diagnostic.of(
                Code.E_CFG_001,
                "capsule.hub.cluster." + key + " must be >= " + min.toMillis() + " ms, got " + d));
      }
    }
  }

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
   * One node of an N-node hub cluster: Artery TCP listening on {@code canonical} (the address the
   * other nodes dial, so it must be reachable from them), joining through the static {@code seeds}
   * (Cluster Bootstrap is not available at this Pekko version), the split-brain resolver keeping
   * the majority, and {@code failover}'s timings so that a killed node's tasks move within seconds.
   *
   * <p>Every node must be started with the same {@code systemName} and the same seed list in the
   * same order: the first seed forms the cluster when no other seed answers. With keep-majority, a
   * cluster of 3 survives the loss of 1 node; a cluster of 2 that loses one node stops both (which
   * half is the majority cannot be told), so run an odd number of nodes.
   *
   * <p>Besides {@code failover}, the cluster's own periodic tasks run more often than Pekko's 1 s,
   * since each adds up to its period to a failover: the reaper that turns a failure detector's
   * verdict into "unreachable", the leader's actions (removing a downed node) and gossip (a removal
   * waits for the survivors to have seen the down, a round trip of gossip) every 250 ms. Each costs
   * a look at the membership table or a message of a few hundred bytes to a peer: nothing for a hub
   * cluster's few nodes.
   *
   * <p>The resolver downs every node when reachability keeps changing for stable-after + {@code
   * down-all-when-unstable} (a precaution against conflicting decisions in a flapping network).
   * Derived from a short stable-after that is 4 s, and a starved host's survivors flapping for a
   * moment after a kill came within 0.1 s of it (HubClusterKillTest at load ~31): 15 s keeps the
   * precaution for a network that really flaps without ending a cluster whose host had a bad few
   * seconds; it costs nothing while the cluster is stable. The sharding coordinator's retry waits
   * are shortened too (its defaults of 2 s and 5 s would add to the failover of the node holding
   * the coordinator, which is the oldest node and so usually the first seed), and a region retries
   * registering and locating shards every 250 ms.
   */
  public static Config member(
      String systemName, Endpoint canonical, List<Endpoint> seeds, Failover failover) {
    if (seeds.isEmpty()) {
      throw new IllegalArgumentException("a cluster member needs at least one seed node");
    }
    List<String> seedAddresses = seeds.stream().map(s -> s.address(systemName)).toList();
    return ConfigFactory.parseString(
            """
            pekko.actor.provider = cluster
            pekko.remote.artery.transport = tcp
            pekko.cluster.downing-provider-class = "org.apache.pekko.cluster.sbr.SplitBrainResolverProvider"
            pekko.cluster.split-brain-resolver.active-strategy = keep-majority
            pekko.cluster.split-brain-resolver.down-all-when-unstable = 15s
            pekko.cluster.jmx.enabled = off
            pekko.cluster.unreachable-nodes-reaper-interval = 250ms
            pekko.cluster.leader-actions-interval = 250ms
            pekko.cluster.gossip-interval = 250ms
            pekko.cluster.sharding.retry-interval = 250ms
            pekko.cluster.sharding.coordinator-failure-backoff = 1s
            pekko.cluster.singleton.hand-over-retry-interval = 500ms
            """)
        .withValue(
            "pekko.remote.artery.canonical.hostname",
            ConfigValueFactory.fromAnyRef(canonical.host()))
        .withValue(
            "pekko.remote.artery.canonical.port", ConfigValueFactory.fromAnyRef(canonical.port()))
        .withValue("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(seedAddresses))
        .withValue(
            "pekko.cluster.failure-detector.heartbeat-interval",
            millis(failover.heartbeatInterval()))
        .withValue(
            "pekko.cluster.failure-detector.acceptable-heartbeat-pause",
            millis(failover.heartbeatPause()))
        .withValue(
            "pekko.cluster.split-brain-resolver.stable-after", millis(failover.stableAfter()))
        .withValue("pekko.cluster.down-removal-margin", millis(failover.downRemovalMargin()));
  }

  private static com.typesafe.config.ConfigValue millis(Duration d) {
    return ConfigValueFactory.fromAnyRef(d.toMillis() + "ms");
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
