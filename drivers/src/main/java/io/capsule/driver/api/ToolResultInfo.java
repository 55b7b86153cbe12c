package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code tool-result-info}: the result of a tool call. */
public record ToolResultInfo(String id, String output, boolean isError) {
  public ToolResultInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(output, "output");
  }
}
