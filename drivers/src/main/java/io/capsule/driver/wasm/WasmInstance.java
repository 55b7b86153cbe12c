package io.capsule.driver.wasm;

/**
 * One instance of a driver module, kept for a whole run. Values cross as raw bits in a {@code
 * long}: i32 in the low 32 bits, i64 as is, f32/f64 as their IEEE bit patterns.
 *
 * <p>Not thread-safe: one call at a time, from the thread that owns it. A trap, an exceeded
 * deadline or the memory cap throws {@link DriverTrap}; the instance may be unusable afterwards and
 * the caller ends the run.
 */
public interface WasmInstance extends AutoCloseable {

  boolean hasExport(String name);

  /** Calls a function export; the result has as many values as the function returns. */
  long[] call(String export, long... args);

  /** The exported {@code memory}. */
  GuestMemory memory();

  /**
   * What the guest wrote to its stdout and stderr since the last drain, as run notes; always empty
   * for an instance that imports nothing.
   */
  default java.util.List<String> drainOutput() {
    return java.util.List.of();
  }

  /** Releases native resources; idempotent. */
  @Override
  void close();
}
