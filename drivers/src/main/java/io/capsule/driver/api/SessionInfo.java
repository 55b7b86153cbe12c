package io.capsule.driver.api;

import java.util.Objects;
import java.util.Optional;

/** WIT {@code session-info}: the session the harness started and how it bills. */
public record SessionInfo(String id, String auth, Optional<String> model) {
  public SessionInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(auth, "auth");
    Objects.requireNonNull(model, "model");
  }
}
