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
 * @param hubUrl the hub URL this state is about (of several, the node it is connected to), when
 *     known
 */
public record ConnectionState(
    Status status,
    int attempt,
    OptionalInt closeCode,
    Optional<String> reason,
    Optional<String> hubUrl) {

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
    hubUrl = hubUrl == null ? Optional.empty() : hubUrl;
  }

  public ConnectionState(
      Status status, int attempt, OptionalInt closeCode, Optional<String> reason) {
    this(status, attempt, closeCode, reason, Optional.empty());
  }

  /** The same state, about {@code url}. */
  public ConnectionState at(String url) {
    return new ConnectionState(status, attempt, closeCode, reason, Optional.of(url));
  }

  /**
   * One line for a person: {@code connected}, {@code connecting (attempt 3)}, {@code disconnected
   * (close 1011: the hub stopped): E-PRO-010; retrying}.
   */
  public String describe() {
    return switch (status) {
      case CONNECTING -> attempt == 0 ? "connecting" : "connecting (attempt " + (attempt + 1) + ")";
      case CONNECTED -> "connected";
      case CLOSED -> "closed";
      case DISCONNECTED ->
          "disconnected"
              + (closeCode.isPresent() ? " (" + label(closeCode.getAsInt()) + ")" : "")
              + reason.map(r -> ": " + r).orElse("")
              + "; retrying";
    };
  }

  private static String label(int code) {
    return switch (code) {
      case 401 -> "HTTP 401: the token was refused";
      case CloseCodes.NORMAL -> "close 1000: closed by the hub";
      case CloseCodes.POLICY_VIOLATION -> "close 1008: no hello in time";
      case CloseCodes.TOO_BIG -> "close 1009: a frame above the cap";
      case CloseCodes.INTERNAL_ERROR -> "close 1011: the hub stopped";
      case CloseCodes.REPLACED -> "close 4000: replaced by a newer connection";
      case CloseCodes.PROJECT_MISMATCH -> "close 4401: the token is for another project";
      case CloseCodes.MOVED -> "close 4012: the hub's brain moved to another node";
      case CloseCodes.CUT_OFF -> "close 4014: the hub node is cut off from its cluster";
      default -> (code < 1000 ? "HTTP " : "close ") + code;
    };
  }

  static ConnectionState of(Status status, int attempt) {
    return new ConnectionState(status, attempt, OptionalInt.empty(), Optional.empty());
  }
}
