package io.capsule.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * A small Pekko Cluster in one JVM for tests of clustered capsule runs ({@code CapsuleSharding}):
 * each node is its own {@code ActorSystem} on 127.0.0.1 with Artery TCP on a free port, the
 * split-brain resolver (keep-majority) as the downing provider, and timings shrunk so a lost node
 * is downed in seconds, not the production half-minute. Node 0 is the first seed; start it with the
 * roles the test needs (a node without the runner role is a pure caller).
 *
 * <pre>{@code
 * try (CapsuleClusterKit cluster = CapsuleClusterKit.start(
 *     List.of(Set.of(), Set.of("capsule-runner"), Set.of("capsule-runner")))) {
 *   CapsuleSharding caller = CapsuleSharding.init(cluster.node(0), settings);
 *   ...
 *   cluster.stopAbruptly(1);            // as if the JVM died: no leave, no hand-off
 * }
 * }</pre>
 *
 * <p>Abrupt stop: the node's system terminates without leaving the cluster (coordinated shutdown
 * does not run on terminate); the others see it unreachable, and the split-brain resolver downs it
 * after {@code stable-after}. Graceful stop ({@link #leave}) runs coordinated shutdown: the node
 * leaves, its shards are handed off, then it terminates. Keep-majority needs a majority left: start
 * at least three nodes to lose one.
 */
public final class CapsuleClusterKit implements AutoCloseable {

  /** One system name for every node: Artery only joins systems of the same name. */
  public static final String SYSTEM_NAME = "capsule-cluster";

  /** How long the helper waits for membership to settle (start, join, removal). */
  public static final Duration SETTLE = Duration.ofSeconds(60);

  private final Config extra;
  private final List<ActorSystem<Void>> nodes = new ArrayList<>();

  private CapsuleClusterKit(Config extra) {
    this.extra = extra;
  }

  /**
   * Starts one node per entry of {@code roles}, joins them, and waits until every node sees all of
   * them up.
   */
  public static CapsuleClusterKit start(List<Set<String>> roles) {
    return start(roles, ConfigFactory.empty());
  }

  /** As above, with {@code extra} over the helper's configuration (e.g. capsule.* settings). */
  public static CapsuleClusterKit start(List<Set<String>> roles, Config extra) {
    CapsuleClusterKit kit = new CapsuleClusterKit(extra);
    try {
      for (Set<String> r : roles) {
        kit.add(r);
      }
      kit.awaitUp(roles.size());
      return kit;
    } catch (RuntimeException | Error e) {
      kit.close();
      throw e;
    }
  }

  /**
   * The configuration of one node: loopback Artery on a free port, the split-brain resolver, and
   * failure detection shrunk for tests (a node silent for 2 s is unreachable; downed after 2 s more
   * of stable membership).
   */
  public static Config nodeConfig(Set<String> roles) {
    String list =
        roles.stream().map(r -> "\"" + r + "\"").collect(Collectors.joining(", ", "[", "]"));
    return ConfigFactory.parseString(
        """
        pekko.actor.provider = cluster
        pekko.remote.artery.transport = tcp
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.seed-nodes = []
        pekko.cluster.roles = %s
        pekko.cluster.jmx.enabled = off
        pekko.cluster.downing-provider-class = "org.apache.pekko.cluster.sbr.SplitBrainResolverProvider"
        pekko.cluster.split-brain-resolver.active-strategy = keep-majority
        pekko.cluster.split-brain-resolver.stable-after = 2s
        pekko.cluster.failure-detector.acceptable-heartbeat-pause = 2s
        pekko.cluster.sharding.distributed-data.durable.keys = []
        pekko.coordinated-shutdown.run-by-actor-system-terminate = off
        pekko.coordinated-shutdown.exit-jvm = off
        pekko.log-dead-letters = off
        """
            .formatted(list));
  }

  /** Starts one more node with {@code roles}, joins it to a live node, and waits until it is up. */
  public ActorSystem<Void> add(Set<String> roles) {
    ActorSystem<Void> system =
        ActorSystem.create(
            Behaviors.empty(),
            SYSTEM_NAME,
            extra.withFallback(nodeConfig(roles)).withFallback(ConfigFactory.load()));
    Cluster cluster = Cluster.get(system);
    Address seed =
        live().stream()
            .findFirst()
            .map(s -> Cluster.get(s).selfMember().address())
            .orElse(cluster.selfMember().address());
    nodes.add(system);
    cluster.manager().tell(Join.create(seed));
    awaitUp(live().size());
    return system;
  }

  /** Node {@code i} in the order started (a stopped node stays at its index). */
  public ActorSystem<Void> node(int i) {
    return nodes.get(i);
  }

  public int size() {
    return nodes.size();
  }

  /** The nodes not stopped. */
  public List<ActorSystem<Void>> live() {
    return nodes.stream().filter(s -> !s.whenTerminated().isCompleted()).toList();
  }

  /** The node dies as a JVM would: no leave, no hand-off; the others down it. Waits for that. */
  public void stopAbruptly(int i) {
    ActorSystem<Void> gone = nodes.get(i);
    Address address = Cluster.get(gone).selfMember().address();
    gone.terminate();
    await(gone);
    awaitRemoved(address);
  }

  /**
   * The node leaves gracefully (coordinated shutdown: leave, shard hand-off, terminate); waits
   * until it has terminated and the others no longer list it.
   */
  public void leave(int i) {
    ActorSystem<Void> going = nodes.get(i);
    Address address = Cluster.get(going).selfMember().address();
    CoordinatedShutdown.get(going).run(CoordinatedShutdown.unknownReason());
    await(going);
    awaitRemoved(address);
  }

  /** Waits until every live node sees {@code n} members up. */
  public void awaitUp(int n) {
    awaitUp(n, SETTLE);
  }

  /**
   * Waits at most {@code bound} until every live node sees {@code n} members up (e.g. nodes in
   * other JVMs, whose start-up may take longer than {@link #SETTLE} on a loaded machine).
   */
  public void awaitUp(int n, Duration bound) {
    List<ActorSystem<Void>> live = live();
    TestProbe<Object> probe = TestProbe.create(live.get(0));
    probe.awaitAssert(
        bound,
        () -> {
          for (ActorSystem<Void> s : live) {
            long up = members(s).stream().filter(m -> m.status() == MemberStatus.up()).count();
            if (up != n) {
              throw new AssertionError(s.address() + " sees " + up + " members up, not " + n);
            }
          }
          return null;
        });
  }

  private void awaitRemoved(Address address) {
    List<ActorSystem<Void>> live = live();
    if (live.isEmpty()) {
      return;
    }
    TestProbe<Object> probe = TestProbe.create(live.get(0));
    probe.awaitAssert(
        SETTLE,
        () -> {
          for (ActorSystem<Void> s : live) {
            if (members(s).stream().anyMatch(m -> m.address().equals(address))) {
              throw new AssertionError(s.address() + " still lists " + address);
            }
          }
          return null;
        });
  }

  private static List<Member> members(ActorSystem<?> s) {
    return StreamSupport.stream(Cluster.get(s).state().getMembers().spliterator(), false).toList();
  }

  private static void await(ActorSystem<?> s) {
    try {
      s.getWhenTerminated().toCompletableFuture().get(SETTLE.toSeconds(), TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(s.name() + " did not terminate within " + SETTLE, e);
    }
  }

  /** Terminates every node still running and waits for each. */
  @Override
  public void close() {
    for (ActorSystem<Void> s : live()) {
      s.terminate();
    }
    for (ActorSystem<Void> s : nodes) {
      await(s);
    }
  }
}
