package io.capsule.runtime.cluster;

import java.util.Optional;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.typed.HashCodeMessageExtractor;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;

/** Registers the run entity type with Pekko Cluster Sharding on one node. */
public final class Shards {
  private Shards() {}

  /**
   * @param host this node's services when it has the runner role; empty on other nodes, where
   *     sharding runs only a proxy and never creates an entity
   */
  public static void init(
      ActorSystem<?> system, String role, int numberOfShards, Optional<HostServices> host) {
    ClusterSharding.get(system)
        .init(
            Entity.of(
                    RunEntity.TYPE_KEY,
                    ctx ->
                        RunEntity.create(
                            ctx.getEntityId(),
                            ctx.getShard(),
                            host.orElseThrow(
                                () ->
                                    new IllegalStateException(
                                        "a run entity was asked for on a node without role '"
                                            + role
                                            + "'"))))
                .withRole(role)
                .withMessageExtractor(new HashCodeMessageExtractor<>(numberOfShards))
                .withStopMessage(RunEntity.stopMessage())
                .withAllocationStrategy(new NoRebalance())
                // A run entity stops only by its own passivation (after its outcome) or a hand-off:
                // idle passivation would cancel a long, quiet run.
                .withSettings(ClusterShardingSettings.create(system).withNoPassivationStrategy()));
  }
}
