package io.capsule.driver.abi;

import java.util.Objects;
import java.util.Optional;

/**
 * The value of a {@code variant} or {@code result}: the case index (declaration order from 0) and
 * the payload, empty for a case that carries nothing.
 */
public record WitVariant(int caseIndex, Optional<Object> payload) {
  public WitVariant {
    if (caseIndex < 0) {
      throw new IllegalArgumentException("case index must not be negative: " + caseIndex);
    }
    Objects.requireNonNull(payload, "payload");
  }

  public static WitVariant of(int caseIndex) {
    return new WitVariant(caseIndex, Optional.empty());
  }

  public static WitVariant of(int caseIndex, Object payload) {
    return new WitVariant(caseIndex, Optional.of(payload));
  }

  /** The payload of a case known to carry one. */
  public Object get() {
    return payload.orElseThrow(
        () -> new IllegalStateException("case " + caseIndex + " carries no payload"));
  }
}
