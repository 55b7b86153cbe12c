package io.capsule.driver.api;

import java.util.List;

/** WIT {@code harness-needs}: paths and hosts the harness needs beyond the capsule's grants. */
public record HarnessNeeds(List<PathNeed> paths, List<String> hosts) {
  public static final HarnessNeeds NONE = new HarnessNeeds(List.of(), List.of());

  public HarnessNeeds {
    paths = List.copyOf(paths);
    hosts = List.copyOf(hosts);
  }
}
