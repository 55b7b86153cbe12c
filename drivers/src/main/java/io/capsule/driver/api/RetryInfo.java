package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code retry-info}: the harness retries its provider; {@code attempt} is a {@code u32}. */
public record RetryInfo(long attempt, String reason) {
  public RetryInfo {
    if (attempt < 0 || attempt > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("attempt is a u32: " + attempt);
    }
    Objects.requireNonNull(reason, "reason");
  }
}
