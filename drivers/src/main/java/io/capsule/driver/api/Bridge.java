package io.capsule.driver.api;

import java.util.List;
import java.util.Objects;

/**
 * WIT {@code bridge}: the endpoint through which the harness calls the capsule's tools. {@link
 * #toString()} never shows the bearer token.
 */
public record Bridge(String serverName, String url, String bearerToken, List<String> toolNames) {
  public Bridge {
    Objects.requireNonNull(serverName, "serverName");
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(bearerToken, "bearerToken");
    toolNames = List.copyOf(toolNames);
  }

  @Override
  public String toString() {
    return "Bridge[serverName=" + serverName + ", url=" + url + ", tools=" + toolNames + "]";
  }
}
