package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code tool-call-progress}: input bytes written so far, cumulative ({@code u64}). */
public record ToolCallProgress(String id, long inputBytes) {
  public ToolCallProgress {
    Objects.requireNonNull(id, "id");
  }
}
