package io.capsule.hub;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityContext;

/**
 * What one node (actor system) keeps for the hubs it serves, once per project: the live push's
 * topic and subscriber ({@link LiveFeed}: actors with fixed names), and how this node builds a
 * project's brain when sharding starts it here. Sharding's entity factory is registered once per
 * system, so it reads the current builder from here: a hub stopped and started again in the same
 * system (tests; an embedding application) builds its brains with its own settings.
 */
final class HubNode implements Extension {
  private static final Id ID = new Id();

  private final ActorSystem<?> system;
  private final Map<String, LiveFeed> feeds = new ConcurrentHashMap<>();
  private final Map<String, Function<EntityContext<HubBrain.Command>, Behavior<HubBrain.Command>>>
      brains = new ConcurrentHashMap<>();
  private volatile boolean sharded;

  private HubNode(ActorSystem<?> system) {
    this.system = system;
  }

  static HubNode get(ActorSystem<?> system) {
    return ID.apply(system);
  }

  /** This node's live push for {@code projectId}, started on first use. */
  LiveFeed live(String projectId) {
    return feeds.computeIfAbsent(projectId, p -> LiveFeed.start(system, p));
  }

  /**
   * Registers how this node builds {@code projectId}'s brain and starts brain sharding on this node
   * (once).
   */
  synchronized ClusterSharding shardBrains(
      String projectId,
      Function<EntityContext<HubBrain.Command>, Behavior<HubBrain.Command>> builder) {
    brains.put(projectId, builder);
    ClusterSharding sharding = ClusterSharding.get(system);
    if (!sharded) {
      sharding.init(
          Entity.of(
              HubBrain.KEY,
              ctx -> {
                var build = brains.get(ctx.getEntityId());
                if (build == null) {
                  throw new IllegalStateException(
                      "this node serves no hub for project " + ctx.getEntityId());
                }
                return build.apply(ctx);
              }));
      sharded = true;
    }
    return sharding;
  }

  private static final class Id extends ExtensionId<HubNode> {
    @Override
    public HubNode createExtension(ActorSystem<?> system) {
      return new HubNode(system);
    }
  }
}
