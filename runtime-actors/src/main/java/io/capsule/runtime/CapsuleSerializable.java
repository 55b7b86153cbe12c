package io.capsule.runtime;

/**
 * Marker for every message that may cross nodes (ARCHITECTURE: "The hub and the cluster"): a
 * sharded run's start, cancel, events and outcome. {@code reference.conf} binds it to Pekko's
 * Jackson CBOR serializer; {@code CrossNodeSerializationTest} walks the sealed protocols so a new
 * variant without it fails. Only records of plain values, {@code ActorRef}s and other marked
 * records implement it; node-local messages (stream elements, timer ticks, process callbacks) never
 * do.
 */
public interface CapsuleSerializable {}
