package io.capsule.driver.wasm;

/**
 * A guest's linear memory as the canonical ABI sees it: little-endian loads and stores at addresses
 * in {@code [0, size())}, plus the guest's own allocator ({@code cabi_realloc}).
 *
 * <p>Addresses are unsigned 32-bit values carried in an {@code int}; implementations bounds-check
 * every access and throw {@link AbiViolation} for an out-of-range one, never an index exception.
 * Views of the memory may go stale when it grows (after {@link #realloc}); implementations fetch a
 * fresh view as needed, callers never cache one.
 *
 * <p>Not thread-safe: confined to the thread that currently owns the instance.
 */
public interface GuestMemory {

  /** Current size in bytes. */
  long size();

  byte loadU8(int address);

  short loadU16(int address);

  int loadI32(int address);

  long loadI64(int address);

  /** Copies {@code length} bytes starting at {@code address}. */
  byte[] loadBytes(int address, int length);

  /**
   * Copies {@code length} bytes starting at {@code address} into {@code into} at {@code offset},
   * bounds-checked as {@link #loadBytes(int, int)}: for a reader that reuses one array.
   */
  default void loadBytes(int address, byte[] into, int offset, int length) {
    System.arraycopy(loadBytes(address, length), 0, into, offset, length);
  }

  void storeU8(int address, byte value);

  void storeU16(int address, short value);

  void storeI32(int address, int value);

  void storeI64(int address, long value);

  void storeBytes(int address, byte[] bytes);

  /**
   * Calls the guest's {@code cabi_realloc(old_ptr, old_size, align, new_size)} and returns the new
   * pointer. The result must be aligned and in bounds, else {@link AbiViolation}.
   */
  int realloc(int oldPtr, int oldSize, int align, int newSize);

  /**
   * Whether {@link #allocStringList} is offered: the engine can make a {@code list<string>}'s
   * {@code cabi_realloc} calls from inside the guest's store, in one call per list (wasmtime, where
   * each host-to-guest call is expensive).
   */
  default boolean allocatesStringsInOneCall() {
    return false;
  }

  /**
   * Allocates a {@code list<string>} whose elements have these byte lengths: calls {@code
   * cabi_realloc(0, 0, 4, 8 * count)} for the list, then {@code cabi_realloc(0, 0, 1, length)} for
   * each element in order, checks each pointer as {@link #realloc} does, and writes each element's
   * pointer and length slots; the caller then copies the bytes. The same calls, arguments and order
   * as one {@link #realloc} for the list and one per string.
   *
   * @return the list's pointer
   * @throws AbiViolation for the first bad pointer, as {@link #realloc} would
   * @throws UnsupportedOperationException unless {@link #allocatesStringsInOneCall()}
   */
  default int allocStringList(int[] lengths) {
    throw new UnsupportedOperationException("this engine allocates one string per call");
  }
}
