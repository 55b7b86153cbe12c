package io.capsule.runtime.driver;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.ProcessDriver;
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

  /** A loaded driver: its description (read once) and a factory of per-run instances. */
  record Loaded(Description description, Supplier<ProcessDriver> instances) {
    public Loaded {
      Objects.requireNonNull(description, "description");
      Objects.requireNonNull(instances, "instances");
    }
  }
}
