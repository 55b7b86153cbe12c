package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code tool-call-start}: a tool call the model has begun writing. */
public record ToolCallStart(String id, String name) {
  public ToolCallStart {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
  }
}
