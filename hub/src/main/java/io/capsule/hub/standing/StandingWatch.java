package io.capsule.hub.standing;

import io.capsule.hub.standing.Standing.Verdict;
import java.time.Duration;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * Re-decides this node's {@link Standing} when its cluster changes and on a short timer, logs each
 * change, and tells {@link NodeStanding}'s listeners when the node becomes cut off.
 */
final class StandingWatch {
  /**
   * How often the verdict is taken again besides on events: the failure detector's view of a peer
   * changes with time alone (a stale heartbeat), before the cluster's reaper (every 250 ms) turns
   * it into an event. 200 ms costs a look at a few members.
   */
  static final Duration EVERY = Duration.ofMillis(200);

  sealed interface Command {}

  private record Tick() implements Command {}

  private record Changed(ClusterEvent.ClusterDomainEvent event) implements Command {}

  private StandingWatch() {}

  static Behavior<Command> create(NodeStanding standing) {
    return Behaviors.setup(
        ctx -> {
          Cluster cluster = Cluster.get(ctx.getSystem());
          cluster
              .subscriptions()
              .tell(
                  Subscribe.create(
                      ctx.messageAdapter(ClusterEvent.MemberEvent.class, Changed::new),
                      ClusterEvent.MemberEvent.class));
          cluster
              .subscriptions()
              .tell(
                  Subscribe.create(
                      ctx.messageAdapter(ClusterEvent.ReachabilityEvent.class, Changed::new),
                      ClusterEvent.ReachabilityEvent.class));
          return Behaviors.withTimers(
              timers -> {
                timers.startTimerWithFixedDelay(new Tick(), EVERY);
                return watching(ctx, standing, Verdict.JOINING);
              });
        });
  }

  private static Behavior<Command> watching(
      ActorContext<Command> ctx, NodeStanding standing, Verdict last) {
    return Behaviors.receive(Command.class)
        .onAnyMessage(
            m -> {
              Standing.Facts facts = standing.facts();
              Verdict now = Standing.decide(facts);
              if (now == last) {
                return Behaviors.same();
              }
              if (now == Verdict.CUT_OFF) {
                ctx.getLog()
                    .warn(
                        "this node is cut off from its cluster ({}): it closes its runners'"
                            + " sockets and refuses the task API (E-HUB-009)",
                        facts);
                standing.cutOffNow();
              } else if (last == Verdict.CUT_OFF) {
                ctx.getLog().info("this node hears most of its cluster again ({})", facts);
              }
              return watching(ctx, standing, now);
            })
        .build();
  }
}
