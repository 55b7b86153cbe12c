package io.capsule.runtime;

/**
 * Marker for every message that may cross nodes (ARCHITECTURE: "Designing for the cluster now").
 * {@code reference.conf} binds it to Pekko's Jackson JSON serializer. Only records of plain values,
 * {@code ActorRef}s and other marked records implement it; node-local messages (stream elements,
 * timer ticks, process callbacks) never do.
 */
public interface CapsuleSerializable {}
