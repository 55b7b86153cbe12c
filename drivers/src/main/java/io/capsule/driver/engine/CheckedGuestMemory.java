package io.capsule.driver.engine;

import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmInstance;

/**
 * The engine-independent half of {@link GuestMemory}: every access is bounds-checked against the
 * current size (unsigned 32-bit addresses) before the engine's raw accessor runs, so a bad guest
 * pointer is an {@link io.capsule.driver.wasm.AbiViolation} on both engines alike, and {@link
 * #realloc} validates what the guest's allocator returns.
 *
 * <p>Not thread-safe: confined with its instance.
 */
abstract class CheckedGuestMemory implements GuestMemory {

  private final WasmInstance instance;

  CheckedGuestMemory(WasmInstance instance) {
    this.instance = instance;
  }

  /** Checks {@code [address, address + length)} and returns the address as a non-negative int. */
  protected final int check(int address, long length) {
    long start = Integer.toUnsignedLong(address);
    long size = size();
    if (length < 0 || start + length > size) {
      throw Failures.outOfBounds(start, length, size);
    }
    return (int) start;
  }

  protected abstract byte rawU8(int at);

  protected abstract short rawU16(int at);

  protected abstract int rawI32(int at);

  protected abstract long rawI64(int at);

  protected abstract byte[] rawBytes(int at, int length);

  /** {@link #rawBytes} into an array the caller gives; engines with a view override it. */
  protected void rawBytesInto(int at, byte[] into, int offset, int length) {
    System.arraycopy(rawBytes(at, length), 0, into, offset, length);
  }

  protected abstract void rawStoreU8(int at, byte value);

  protected abstract void rawStoreU16(int at, short value);

  protected abstract void rawStoreI32(int at, int value);

  protected abstract void rawStoreI64(int at, long value);

  protected abstract void rawStoreBytes(int at, byte[] bytes);

  @Override
  public final byte loadU8(int address) {
    return rawU8(check(address, 1));
  }

  @Override
  public final short loadU16(int address) {
    return rawU16(check(address, 2));
  }

  @Override
  public final int loadI32(int address) {
    return rawI32(check(address, 4));
  }

  @Override
  public final long loadI64(int address) {
    return rawI64(check(address, 8));
  }

  @Override
  public final byte[] loadBytes(int address, int length) {
    return rawBytes(check(address, length), length);
  }

  @Override
  public final void loadBytes(int address, byte[] into, int offset, int length) {
    java.util.Objects.checkFromIndexSize(offset, length, into.length);
    rawBytesInto(check(address, length), into, offset, length);
  }

  @Override
  public final void storeU8(int address, byte value) {
    rawStoreU8(check(address, 1), value);
  }

  @Override
  public final void storeU16(int address, short value) {
    rawStoreU16(check(address, 2), value);
  }

  @Override
  public final void storeI32(int address, int value) {
    rawStoreI32(check(address, 4), value);
  }

  @Override
  public final void storeI64(int address, long value) {
    rawStoreI64(check(address, 8), value);
  }

  @Override
  public final void storeBytes(int address, byte[] bytes) {
    rawStoreBytes(check(address, bytes.length), bytes);
  }

  @Override
  public final int realloc(int oldPtr, int oldSize, int align, int newSize) {
    long[] result = instance.call("cabi_realloc", oldPtr, oldSize, align, newSize);
    if (result.length != 1) {
      throw Failures.badRealloc("returned " + result.length + " values, not one pointer");
    }
    int ptr = (int) result[0];
    checkAllocation(ptr, align, newSize);
    return ptr;
  }

  /** What {@link #realloc} requires of a pointer the guest's allocator returned. */
  protected final void checkAllocation(int ptr, int align, int newSize) {
    long unsigned = Integer.toUnsignedLong(ptr);
    if (align > 0 && unsigned % align != 0) {
      throw Failures.badRealloc(
          "returned 0x" + Long.toHexString(unsigned) + ", not aligned to " + align);
    }
    if (unsigned + Integer.toUnsignedLong(newSize) > size()) {
      throw Failures.badRealloc(
          "returned 0x"
              + Long.toHexString(unsigned)
              + " for "
              + Integer.toUnsignedString(newSize)
              + " bytes, outside the guest's "
              + size()
              + " bytes");
    }
  }
}
