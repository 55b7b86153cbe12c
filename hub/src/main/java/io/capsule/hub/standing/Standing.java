package io.capsule.hub.standing;

import java.util.Objects;

/**
 * Whether a hub node may serve: a pure decision over what the node knows of its cluster, so the
 * node's edge (runner sockets, the task API, {@code /readyz}) and its brain's journal act on one
 * verdict (docs/settings.md, "A cut-off node lets go").
 *
 * <p>The rules, in order:
 *
 * <ol>
 *   <li>a node outside a cluster (a plain actor system) serves;
 *   <li>a node that is leaving, exiting, downed or removed is {@link Verdict#CUT_OFF}: the cluster
 *       has given it up, its brain runs elsewhere;
 *   <li>a node not yet up (joining) is {@link Verdict#JOINING}: it takes sockets and requests,
 *       which wait for the brain, but is not ready;
 *   <li>a node that counts itself and the members it can hear, and finds no strict majority of the
 *       members it knows, is {@link Verdict#CUT_OFF}: it is on the minority side of a partition, or
 *       it was frozen and its peers' heartbeats are stale, and the other side may already run its
 *       brain;
 *   <li>otherwise it serves.
 * </ol>
 *
 * A tie (2 of 4) is cut off on both sides until the split-brain resolver downs one: serving on both
 * sides of a tie is what this rule is for.
 */
public final class Standing {
  private Standing() {}

  /** What the node does. */
  public enum Verdict {
    /** Serves runners and the task API; its brain may write. */
    SERVING,
    /** Not yet a member that is up: not ready, but nothing is refused. */
    JOINING,
    /** Lets go: closes runner sockets (4014), refuses upgrades and API calls (503, E-HUB-009). */
    CUT_OFF
  }

  /** The node's own membership status, as far as this decision cares. */
  public enum Self {
    NO_CLUSTER,
    JOINING,
    UP,
    GONE
  }

  /**
   * What the node knows now.
   *
   * @param self its own status
   * @param others other members that count for a majority (up, or weakly up)
   * @param silent how many of {@code others} it cannot hear: unreachable to its own failure
   *     detector (its view, not gossip's)
   */
  public record Facts(Self self, int others, int silent) {
    public Facts {
      Objects.requireNonNull(self, "self");
      if (others < 0 || silent < 0 || silent > others) {
        throw new IllegalArgumentException("0 <= silent <= others, got " + silent + "/" + others);
      }
    }
  }

  /** The verdict for {@code facts}, by the rules above. */
  public static Verdict decide(Facts facts) {
    return switch (facts.self()) {
      case NO_CLUSTER -> Verdict.SERVING;
      case GONE -> Verdict.CUT_OFF;
      case JOINING -> Verdict.JOINING;
      case UP -> {
        int known = 1 + facts.others();
        int heard = 1 + facts.others() - facts.silent();
        yield 2 * heard > known ? Verdict.SERVING : Verdict.CUT_OFF;
      }
    };
  }
}
