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

  /**
   * Whether {@link #callWithStrings} takes a call of {@code export} with strings of this many bytes
   * in all: an export of core type {@code (i32, i32) -> i32} taking a {@code list<string>}, on an
   * engine that can lower the list in the same guest call (wasmtime, where each host-to-guest call
   * is expensive).
   */
  default boolean callsWithStrings(String export, long bytes) {
    return false;
  }

  /**
   * Lowers a {@code list<string>} of these UTF-8 encodings as the canonical ABI does — {@code
   * cabi_realloc(0, 0, 4, 8 * count)} for the list, then {@code cabi_realloc(0, 0, 1, length)} per
   * string in order, each pointer checked as {@link GuestMemory#allocStringList} checks it, each
   * slot and string's bytes written — and calls {@code export(list, count)}, in one call into the
   * instance; returns the export's one result (an i32, zero-extended). A bad pointer fails as
   * {@link GuestMemory#allocStringList} fails, and the export is not called.
   *
   * @throws UnsupportedOperationException unless {@link #callsWithStrings} said yes
   */
  default long[] callWithStrings(String export, byte[][] strings) {
    throw new UnsupportedOperationException("this engine lowers strings before the call");
  }

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
