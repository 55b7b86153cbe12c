package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code turn-failure}: a failed turn, its kind and the harness's message. */
public record TurnFailure(FailureKind kind, String message) {
  public TurnFailure {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(message, "message");
  }
}
