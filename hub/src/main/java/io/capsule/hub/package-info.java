/**
 * The hub: the orchestrator runners dial into. Tasks and project queues are event-sourced entities
 * sharded over a Pekko Cluster (one node is a cluster of one); placement is a pure core; the task
 * API, SSE and the runner endpoint are served by every node. See {@code docs/architecture.md}, "The
 * hub and the cluster".
 */
package io.capsule.hub;
