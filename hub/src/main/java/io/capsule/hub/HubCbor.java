package io.capsule.hub;

/**
 * Marks what the hub persists or may send between cluster nodes (entity commands, events,
 * snapshots): bound to Pekko's {@code jackson-cbor} serializer in this module's {@code
 * reference.conf}, so nothing falls back to Java serialization (which Pekko keeps off).
 */
public interface HubCbor {}
