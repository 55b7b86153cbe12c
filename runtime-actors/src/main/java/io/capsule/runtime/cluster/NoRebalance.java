package io.capsule.runtime.cluster;

import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import org.apache.pekko.dispatch.Futures;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Map;
import scala.collection.immutable.Set;
import scala.concurrent.Future;

/**
 * Allocates a new shard as Pekko's least-shard strategy does (to the runner node with the fewest
 * shards, never to one that is leaving) but never rebalances: moving a shard stops its entities,
 * and stopping a run's entity cancels a live harness. A shard moves only when its node leaves or
 * dies, which is exactly when the run is lost anyway.
 */
final class NoRebalance implements ShardCoordinator.ActorSystemDependentAllocationStrategy {

  private final ShardCoordinator.ShardAllocationStrategy allocation =
      // The limits only bound rebalancing, which rebalance() below never asks for.
      ShardCoordinator.ShardAllocationStrategy$.MODULE$.leastShardAllocationStrategy(1, 0.1);

  @Override
  public void start(ActorSystem system) {
    if (allocation instanceof ShardCoordinator.ActorSystemDependentAllocationStrategy s) {
      s.start(system);
    } else if (allocation instanceof ShardCoordinator.StartableAllocationStrategy s) {
      s.start();
    }
  }

  @Override
  public Future<ActorRef> allocateShard(
      ActorRef requester, String shardId, Map<ActorRef, IndexedSeq<String>> current) {
    return allocation.allocateShard(requester, shardId, current);
  }

  @Override
  public Future<Set<String>> rebalance(
      Map<ActorRef, IndexedSeq<String>> current, Set<String> inProgress) {
    return Futures.successful(scala.collection.immutable.Set$.MODULE$.<String>empty());
  }
}
