package io.capsule.cli;

import java.io.PrintWriter;
import java.util.TreeSet;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * Says on a hub node's stdout how its cluster changes, one line each: {@code cluster: 3 nodes up
 * (…)} when a node comes up, {@code cluster: node X unreachable} and {@code cluster: node X
 * removed} when one fails. An operator sees the cluster form and a dead node leave without turning
 * on Pekko's logs; tests wait for the first kind of line.
 *
 * <p>Threading: prints on its own actor thread, holding {@code out}'s lock for each line (the
 * command prints on the same writer).
 */
final class ClusterLines {
  private ClusterLines() {}

  static Behavior<ClusterEvent.ClusterDomainEvent> create(PrintWriter out) {
    return Behaviors.setup(
        ctx -> {
          Cluster cluster = Cluster.get(ctx.getSystem());
          cluster
              .subscriptions()
              .tell(Subscribe.create(ctx.getSelf().narrow(), ClusterEvent.MemberEvent.class));
          cluster
              .subscriptions()
              .tell(Subscribe.create(ctx.getSelf().narrow(), ClusterEvent.ReachabilityEvent.class));
          TreeSet<String> up = new TreeSet<>();
          return Behaviors.receive(ClusterEvent.ClusterDomainEvent.class)
              .onMessage(
                  ClusterEvent.MemberUp.class,
                  e -> {
                    up.add(hostPort(e.member()));
                    say(out, up.size() + (up.size() == 1 ? " node" : " nodes") + " up " + up);
                    return Behaviors.same();
                  })
              .onMessage(
                  ClusterEvent.UnreachableMember.class,
                  e -> {
                    say(out, "node " + hostPort(e.member()) + " unreachable");
                    return Behaviors.same();
                  })
              .onMessage(
                  ClusterEvent.ReachableMember.class,
                  e -> {
                    say(out, "node " + hostPort(e.member()) + " reachable again");
                    return Behaviors.same();
                  })
              .onMessage(
                  ClusterEvent.MemberRemoved.class,
                  e -> {
                    up.remove(hostPort(e.member()));
                    say(
                        out,
                        "node " + hostPort(e.member()) + " removed; " + up.size() + " up " + up);
                    return Behaviors.same();
                  })
              .build();
        });
  }

  private static String hostPort(org.apache.pekko.cluster.Member m) {
    return m.address().getHost().orElse("?") + ":" + m.address().getPort().orElse(0);
  }

  private static void say(PrintWriter out, String line) {
    synchronized (out) {
      out.println("cluster: " + line);
      out.flush();
    }
  }
}
