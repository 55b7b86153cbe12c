package io.capsule.runtime.driver;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.ProcessDriver;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Loads a capsule folder's driver artifact: compile once per artifact, the load checks of
 * docs/run-semantics.md §1.1–§1.3, then a per-run instance factory. The WASM driver loader plugs in
 * here; the registry adds the per-capsule checks of §1.4. Blocking: called on the blocking
 * dispatcher. Refusals are thrown as {@link io.capsule.config.diag.DiagnosticException}s with their
 * codes.
 */
@FunctionalInterface
public interface DriverLoading {

  Loaded load(Manifest manifest);

  /**
   * A loaded driver: its description (read once), a factory of per-run instances, and what the
   * driver printed while describing itself (a WASI driver's captured stdout and stderr; empty for
   * an import-free one), which every run shows as notes.
   */
  record Loaded(
      Description description, Supplier<ProcessDriver> instances, List<String> describeNotes) {
    public Loaded {
      Objects.requireNonNull(description, "description");
      Objects.requireNonNull(instances, "instances");
      describeNotes = List.copyOf(describeNotes);
    }

    /** A driver that printed nothing while describing itself. */
    public Loaded(Description description, Supplier<ProcessDriver> instances) {
      this(description, instances, List.of());
    }
  }
}
