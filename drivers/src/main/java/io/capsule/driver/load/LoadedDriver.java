package io.capsule.driver.load;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.component.DriverBinary;
import io.capsule.driver.wasm.WasmModule;
import io.capsule.driver.wasm.WasmProcessDriver;
import java.time.Duration;
import java.util.List;

/**
 * A driver artifact that passed the load checks (docs/run-semantics.md §1.1–1.3): its description,
 * read once, and the compiled module every run instantiates afresh. Shared by all runs of the
 * artifact; thread-safe. The per-capsule manifest checks are {@link DriverLoader#checkAgainst}.
 */
public final class LoadedDriver {

  private final String origin;
  private final String engineName;
  private final DriverBinary binary;
  private final WasmModule module;
  private final Description description;
  private final Duration callDeadline;
  private final List<String> describeNotes;

  LoadedDriver(
      String origin,
      String engineName,
      DriverBinary binary,
      WasmModule module,
      Description description,
      Duration callDeadline,
      List<String> describeNotes) {
    this.describeNotes = List.copyOf(describeNotes);
    this.origin = origin;
    this.engineName = engineName;
    this.binary = binary;
    this.module = module;
    this.description = description;
    this.callDeadline = callDeadline;
  }

  /** Where it came from: {@code builtin:NAME}, a file path, or the caller's label. */
  public String origin() {
    return origin;
  }

  /** The engine that compiled it: {@code wasmtime} or {@code chicory}. */
  public String engineName() {
    return engineName;
  }

  /** Hex SHA-256 of the core module the host runs. */
  public String sha256() {
    return module.sha256();
  }

  /** Whether the artifact was a component or a plain core module, and its lifts. */
  public DriverBinary binary() {
    return binary;
  }

  public WasmModule module() {
    return module;
  }

  /**
   * What a WASI driver wrote to stdout and stderr during {@code describe()} at load, as notes
   * (empty for an import-free driver); the runtime reports them with the load.
   */
  public List<String> describeNotes() {
    return describeNotes;
  }

  /** What {@code describe()} returned at load, already checked usable. */
  public Description description() {
    return description;
  }

  /**
   * A fresh instance for one run, with {@code _initialize} already called. The caller owns it: one
   * thread at a time, kept for the whole run (so {@code parse} may rely on what {@code launch} was
   * given), closed when the run ends. Instantiation failures are {@code E-RUN-034}.
   */
  public ProcessDriver newInstance() {
    return new WasmProcessDriver(module.instantiate(callDeadline));
  }

  @Override
  public String toString() {
    return "driver " + origin + " (" + description.harness() + ", " + engineName + ")";
  }
}
