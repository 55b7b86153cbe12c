package io.capsule.hub.standing;

import io.capsule.hub.standing.Standing.Facts;
import io.capsule.hub.standing.Standing.Self;
import io.capsule.hub.standing.Standing.Verdict;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.remote.FailureDetectorRegistry;

/**
 * This node's {@link Standing} in its cluster, for whoever must stop when the node is cut off: the
 * runner endpoint (closes its sockets with 4014 and refuses new ones), the task API and {@code
 * /readyz} (503, {@code E-HUB-009}), and the brain's journal (holds its writes).
 *
 * <p>{@link #now()} decides afresh at each call from the cluster's membership and the node's own
 * failure detector, whose verdict on a peer is computed from the time of its last heartbeat at the
 * moment of the call. That is what keeps a node woken from a long freeze from acting on its old
 * view: its peers' heartbeats are as old as the freeze, so the first write its brain tries after
 * waking already finds most peers silent, before any cluster event has been processed. A {@link
 * StandingWatch} actor re-decides on every membership or reachability event and every 200 ms, and
 * runs the {@link #onCutOff} listeners when the verdict turns to cut off.
 *
 * <p>Threading: every method is safe from any thread; listeners run on the watch actor's thread and
 * must only send messages.
 */
public final class NodeStanding implements Extension {
  private static final Id ID = new Id();

  private final Cluster cluster; // null outside a cluster
  private final Set<Runnable> listeners = ConcurrentHashMap.newKeySet();

  private NodeStanding(ActorSystem<?> system) {
    boolean clustered =
        "cluster".equals(system.settings().config().getString("pekko.actor.provider"));
    this.cluster = clustered ? Cluster.get(Adapter.toClassic(system)) : null;
    if (clustered) {
      system.systemActorOf(StandingWatch.create(this), "capsule-hub-standing", Props.empty());
    }
  }

  public static NodeStanding get(ActorSystem<?> system) {
    return ID.apply(system);
  }

  /** The verdict now (see the class comment). */
  public Verdict now() {
    return Standing.decide(facts());
  }

  /** Whether this node is cut off now: it must serve nothing and write nothing. */
  public boolean cutOff() {
    return now() == Verdict.CUT_OFF;
  }

  /** Runs {@code listener} each time the node becomes cut off, until the returned handle is run. */
  public Runnable onCutOff(Runnable listener) {
    listeners.add(listener);
    return () -> listeners.remove(listener);
  }

  Facts facts() {
    if (cluster == null) {
      return new Facts(Self.NO_CLUSTER, 0, 0);
    }
    Member self = cluster.selfMember();
    MemberStatus status = self.status();
    Self s =
        status == MemberStatus.up() || status == MemberStatus.weaklyUp()
            ? Self.UP
            : status == MemberStatus.joining() ? Self.JOINING : Self.GONE;
    FailureDetectorRegistry<org.apache.pekko.actor.Address> fd = cluster.failureDetector();
    int others = 0;
    int silent = 0;
    for (Member m : cluster.state().getMembers()) {
      if (m.equals(self)
          || !(m.status() == MemberStatus.up() || m.status() == MemberStatus.weaklyUp())) {
        continue;
      }
      others++;
      // A peer it does not monitor yet (just joined) counts as heard, as the detector says.
      if (!fd.isAvailable(m.address())) {
        silent++;
      }
    }
    return new Facts(s, others, silent);
  }

  void cutOffNow() {
    listeners.forEach(Runnable::run);
  }

  private static final class Id extends ExtensionId<NodeStanding> {
    @Override
    public NodeStanding createExtension(ActorSystem<?> system) {
      return new NodeStanding(system);
    }
  }
}
