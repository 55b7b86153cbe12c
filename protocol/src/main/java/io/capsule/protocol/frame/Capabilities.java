package io.capsule.protocol.frame;

/** Capability strings this runtime understands. Capabilities are open strings on the wire. */
public final class Capabilities {
  /** The runner wants {@code ack} frames and re-sends only what the hub lacks. */
  public static final String ACK = "ack";

  /** The peer wants {@code error} frames for refused frames instead of silence. */
  public static final String ERROR_FRAMES = "error-frames";

  private Capabilities() {}
}
