package io.capsule.realharness;

import java.util.List;
import java.util.OptionalInt;

/** What the fake Messages API answers to one {@code POST /v1/messages}. */
sealed interface Reply {

  /**
   * A {@code text/event-stream} answer. With {@code stall}, the stream is not ended: the server
   * sends a {@code ping} event every 250 ms until the client goes away or the server closes.
   */
  record Stream(List<MessageStream.SseEvent> events, boolean stall) implements Reply {}

  /**
   * An error answer: the status, and the body {@code {"type":"error","error":{"type", "message"}}};
   * a {@code retry-after} header (seconds) when given.
   */
  record Error(int status, String type, String message, OptionalInt retryAfterSeconds)
      implements Reply {}

  /** 401 {@code authentication_error}, as the API answers a bad key. */
  static Reply unauthorized() {
    return new Error(401, "authentication_error", "invalid x-api-key", OptionalInt.empty());
  }

  /** 429 {@code rate_limit_error} with {@code retry-after}. */
  static Reply rateLimited(int retryAfterSeconds) {
    return new Error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        OptionalInt.of(retryAfterSeconds));
  }
}
