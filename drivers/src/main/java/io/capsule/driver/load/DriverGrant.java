package io.capsule.driver.load;

import io.capsule.config.manifest.NetworkEntry;
import io.capsule.driver.api.PathNeed;
import java.nio.file.Path;
import java.util.List;

/**
 * What a capsule's run of a driver is granted after the manifest checks (docs/run-semantics.md
 * §1.4): the harness binary as resolved, and the driver's own needs — never the wider manifest
 * entries that cover them.
 *
 * @param harnessBinary the executable to run (absolute)
 * @param requiredEnv the names the driver requires, all granted by {@code capabilities.env}
 * @param paths the driver's path needs, each covered by {@code capabilities.harness.paths}
 * @param hosts the driver's host needs, each covered by {@code capabilities.network.allow}
 */
public record DriverGrant(
    Path harnessBinary, List<String> requiredEnv, List<PathNeed> paths, List<NetworkEntry> hosts) {
  public DriverGrant {
    requiredEnv = List.copyOf(requiredEnv);
    paths = List.copyOf(paths);
    hosts = List.copyOf(hosts);
  }
}
