package io.capsule.driver.api;

import java.util.Objects;

/**
 * WIT {@code tool-call-info}: a tool the agent called; {@code name} is bare, {@code input} JSON.
 */
public record ToolCallInfo(String id, String name, String input) {
  public ToolCallInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(input, "input");
  }
}
