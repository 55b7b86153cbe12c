package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code session}: the harness session a turn runs in. */
public record Session(String id, SessionMode mode) {
  public Session {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(mode, "mode");
  }
}
