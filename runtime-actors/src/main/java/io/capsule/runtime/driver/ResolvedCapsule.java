package io.capsule.runtime.driver;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.ProcessDriver;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A capsule ready to run on this node: its manifest, its driver's description (read once), a
 * factory of per-run driver instances, and the harness binary resolved (docs/run-semantics.md §1).
 * Node local: never sent across nodes.
 *
 * @param driverName the driver artifact's name, for the trace
 * @param describeNotes what the driver printed while describing itself, shown by every run as notes
 */
public record ResolvedCapsule(
    Manifest manifest,
    String driverName,
    Description description,
    Supplier<ProcessDriver> drivers,
    Path binary,
    List<String> describeNotes) {

  public ResolvedCapsule {
    Objects.requireNonNull(manifest, "manifest");
    Objects.requireNonNull(driverName, "driverName");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(drivers, "drivers");
    Objects.requireNonNull(binary, "binary");
    describeNotes = List.copyOf(describeNotes);
  }
}
