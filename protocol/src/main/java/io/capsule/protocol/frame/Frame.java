package io.capsule.protocol.frame;

/**
 * One message of runner protocol v1. Every frame carries {@code "type"} and {@code
 * "schema_version": 1} on the wire; the records hold the known fields, typed, and {@link #extra()}
 * the unknown top-level ones. Open strings (roles, progress kinds, capabilities, statuses) stay
 * strings.
 */
public sealed interface Frame permits Hello, Ping, Pong, Ack, ErrorFrame, SequencedFrame {

  /** The only schema version this runtime speaks. */
  int SCHEMA_VERSION = 1;

  /** The wire {@code type}, e.g. {@code task.progress}. */
  String type();

  /** Unknown top-level fields, re-emitted on encode. */
  Extras extra();
}
