package io.capsule.runtime.cluster;

import io.capsule.runtime.CapsuleRuntime;
import java.time.Duration;
import java.util.Objects;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What a run's entity finds on the runner node that hosts it: node-local, handed to the entity's
 * factory at {@code CapsuleSharding.init}, never sent in a message.
 *
 * @param runtime this node's runtime guardian (its driver registry, settings, dispatchers)
 * @param slots this node's run slots
 * @param handOffTimeout how long a leaving node's canceled run may take to end
 * @param linger how long an entity that was canceled before any start keeps that answer for a start
 *     still on its way, and how long an ended run's entity waits for a caller's seal (the caller's
 *     start timeout: no start of a caller is on its way longer)
 * @param node this node's address, as callers are told
 */
public record HostServices(
    ActorRef<CapsuleRuntime.Command> runtime,
    ActorRef<NodeSlots.Command> slots,
    Duration handOffTimeout,
    Duration linger,
    String node) {
  public HostServices {
    Objects.requireNonNull(runtime, "runtime");
    Objects.requireNonNull(slots, "slots");
    Objects.requireNonNull(handOffTimeout, "handOffTimeout");
    Objects.requireNonNull(linger, "linger");
    Objects.requireNonNull(node, "node");
  }
}
