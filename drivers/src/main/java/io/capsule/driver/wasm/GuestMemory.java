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
}
