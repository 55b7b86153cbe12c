package io.capsule.protocol.ws;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Where a {@link RunnerClient} stands with the hub.
 *
 * @param status the phase
 * @param attempt failed attempts since the last good connection (drives the back-off)
 * @param closeCode the WebSocket close code or HTTP status of the last failure, when known (401:
 *     token refused; 4401: project mismatch; 4000: replaced; 1009: frame too big)
 * @param reason why the last connection ended, when it did
 */
public record ConnectionState(
    Status status, int attempt, OptionalInt closeCode, Optional<String> reason) {

  /** The phases of a runner's connection. */
  public enum Status {
    /** Dialling, or upgraded and waiting for the hub's first ack. */
    CONNECTING,
    /** Hello done, replay done: frames flow. */
    CONNECTED,
    /** Waiting out the back-off before the next attempt. */
    DISCONNECTED,
    /** Closed for good by {@link RunnerClient#close()}. */
    CLOSED
  }

  public ConnectionState {
    Objects.requireNonNull(status, "status");
    closeCode = closeCode == null ? OptionalInt.empty() : closeCode;
    reason = reason == null ? Optional.empty() : reason;
  }

  static ConnectionState of(Status status, int attempt) {
    return new ConnectionState(status, attempt, OptionalInt.empty(), Optional.empty());
  }
}
