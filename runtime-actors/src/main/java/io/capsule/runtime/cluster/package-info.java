/**
 * Capsule runs sharded over an embedding application's Pekko Cluster ({@code
 * javadsl.CapsuleSharding} is the entry point).
 *
 * <p>Guaranteed:
 *
 * <ul>
 *   <li>A run is hosted only on a node with the runner role; one entity per task id in the cluster,
 *       so a start is idempotent by task id while its run lives ({@link
 *       io.capsule.runtime.cluster.RunEntity}). The entity passivates only after its outcome is
 *       delivered and confirmed (sent again until it is) and each caller has sealed its starts, so
 *       a caller's repeated start never runs a finished task again.
 *   <li>The caller gets every event of the attempt it follows and exactly one {@code Finished}
 *       ({@link io.capsule.runtime.cluster.RunCaller}): the run's own outcome, node lost ({@code
 *       E-CLU-001}), no slot ({@code E-CLU-002}), no runner ({@code E-CLU-003}) or events lost
 *       between the nodes ({@code E-CLU-004}: the entity numbers its messages, the caller checks
 *       them). Messages are cut by count and size to fit Artery's frame; an event too large for one
 *       crosses in parts.
 *   <li>A node never hosts more runs than {@code capsule.run.max-concurrent} ({@link
 *       io.capsule.runtime.cluster.NodeSlots}, deciding with {@link
 *       io.capsule.runtime.cluster.SlotBook}); every wait for a slot is bounded.
 *   <li>A node that leaves gracefully ends its runs before its shards move; shards never rebalance
 *       ({@link io.capsule.runtime.cluster.NoRebalance}) and entities never passivate mid-run.
 * </ul>
 *
 * <p>Not guaranteed:
 *
 * <ul>
 *   <li>A harness does not outlive its node's JVM only when the JVM ends normally: a JVM killed
 *       with SIGKILL cannot kill the harness's process group, which then lives until it exits by
 *       itself (containment's {@code --die-with-parent} closes that gap).
 *   <li>After its outcome the entity passivates and forgets the task: a new start of a finished
 *       task id, by a new caller, is a new run. A caller whose node died before it sealed is waited
 *       for at most {@code capsule.sharding.start-timeout}.
 *   <li>A start repeated before any runner answered can, after a node died holding the first start,
 *       start the task on another node without a retry having been asked for: the first start never
 *       reported, so its run (if any) died unseen with its node.
 *   <li>Placement follows shards (least-shard allocation), not free slots: a task may wait on a
 *       full node while another has room.
 * </ul>
 */
package io.capsule.runtime.cluster;
