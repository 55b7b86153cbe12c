package io.capsule.driver.api;

import java.util.Objects;
import java.util.Optional;

/**
 * WIT {@code usage}: cumulative token counts for the harness run. Every member is a {@code u64}
 * (read unsigned, see the package doc) and independently optional: empty means <i>not reported</i>,
 * never zero. {@code cacheRead} and {@code cacheCreation} sit beside {@code input}; {@code
 * thinking} is a subset of {@code output}.
 */
public record Usage(
    Optional<Long> input,
    Optional<Long> output,
    Optional<Long> cacheRead,
    Optional<Long> cacheCreation,
    Optional<Long> thinking) {

  public static final Usage NONE =
      new Usage(
          Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

  public Usage {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(cacheRead, "cacheRead");
    Objects.requireNonNull(cacheCreation, "cacheCreation");
    Objects.requireNonNull(thinking, "thinking");
  }
}
