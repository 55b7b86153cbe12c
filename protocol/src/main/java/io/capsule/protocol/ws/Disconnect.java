package io.capsule.protocol.ws;

/** How the hub ends a runner's connection on request (operators, tests). */
public enum Disconnect {
  /** A WebSocket close frame (1000), then the TCP close. */
  CLOSE,
  /** The TCP connection ends without a close frame. */
  DROP,
  /** The connection is failed and reset, without a close frame. */
  ABORT
}
