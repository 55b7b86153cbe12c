package io.capsule.driver.api;

import java.util.Objects;
import java.util.Optional;

/**
 * WIT {@code quota-window}: one subscription window. {@code resetsAt} (ms since the epoch) and
 * {@code windowMinutes} are {@code u64}. The record holds whatever the driver sent; the runtime
 * validates the name and {@code used} before applying it (docs/run-semantics.md §6).
 */
public record QuotaWindow(
    String name,
    Optional<Double> used,
    Optional<Long> resetsAt,
    Optional<Long> windowMinutes,
    Optional<QuotaState> state) {
  public QuotaWindow {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(used, "used");
    Objects.requireNonNull(resetsAt, "resetsAt");
    Objects.requireNonNull(windowMinutes, "windowMinutes");
    Objects.requireNonNull(state, "state");
  }
}
