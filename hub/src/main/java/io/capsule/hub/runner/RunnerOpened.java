package io.capsule.hub.runner;

import io.capsule.hub.HubCbor;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A runner's socket was accepted by {@code gateway} (a {@link RunnerGateway} on any node of the
 * cluster): the brain answers with {@link RunnerGateway.Welcome}. Serializable, so it reaches the
 * brain through the project's sharded entity wherever that runs.
 *
 * @param id the connection's id, unique in the cluster
 * @param tokenProject the project the runner's token is for
 */
public record RunnerOpened(
    String id, RunnerKey key, String tokenProject, ActorRef<RunnerGateway.Command> gateway)
    implements HubCore.Command, HubCbor {}
