package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code path-need}: a host directory ({@code ~/<rest>} or absolute) the harness needs. */
public record PathNeed(String path, PathAccess access) {
  public PathNeed {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(access, "access");
  }
}
