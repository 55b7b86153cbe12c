package io.capsule.driver.engine;

import io.capsule.driver.wasm.WasmInstance;
import java.nio.ByteBuffer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A wasmtime memory seen through the binding's little-endian direct buffer. A guest call may grow
 * the memory, after which the buffer is stale (too short, and possibly moved), so {@link
 * #invalidate()} is called after every guest call; the next access then asks the memory's size (a
 * JNI call) and fetches a new buffer only when the size changed. Memory only moves when it grows,
 * so an unchanged size means the view is still right: a call that lowers a batch through many
 * {@code cabi_realloc} calls usually fetches one view, not one per allocation. After a helper call
 * ({@link WasmtimeHelpers}) the size the helper reported replaces the question ({@link #sizeIs}):
 * measured, the two questions of a {@code parse} batch cost about 1 µs of CPU. One class for a
 * single instance and for a WASI graph.
 */
class WasmtimeBufferMemory extends CheckedGuestMemory {

  private final Supplier<ByteBuffer> fetch;
  private final LongSupplier currentSize;
  private ByteBuffer buffer;
  private boolean unchecked;
  private WasmtimeStringLists stringLists;

  /**
   * @param fetch a fresh view of the whole memory
   * @param currentSize the memory's size in bytes now
   */
  WasmtimeBufferMemory(WasmInstance owner, Supplier<ByteBuffer> fetch, LongSupplier currentSize) {
    super(owner);
    this.fetch = fetch;
    this.currentSize = currentSize;
  }

  /** Offers {@link #allocStringList} through the helper (a single instance with a cabi_realloc). */
  void offerStringLists(WasmtimeStringLists lists) {
    this.stringLists = lists;
  }

  @Override
  public boolean allocatesStringsInOneCall() {
    return stringLists != null;
  }

  @Override
  public int allocStringList(int[] lengths) {
    if (stringLists == null) {
      throw new UnsupportedOperationException("no string-list helper for this memory");
    }
    long packed = stringLists.allocate(lengths);
    if ((int) (packed >>> 32) == WasmtimeStringLists.ALL_GOOD) {
      return (int) packed;
    }
    throw refusal(packed, lengths);
  }

  /**
   * The failure for a string-list helper's packed result that is not {@link
   * WasmtimeStringLists#ALL_GOOD}: the first bad pointer and what it was for.
   */
  RuntimeException refusal(long packed, int[] lengths) {
    int what = (int) (packed >>> 32);
    int ptr = (int) packed;
    // The helper stopped at this pointer; the same check as one realloc's names what is wrong.
    if (what == WasmtimeStringLists.BAD_LIST) {
      checkAllocation(ptr, 4, lengths.length * 8);
    } else {
      checkAllocation(ptr, 1, lengths[what]);
    }
    return Failures.badRealloc(
        "returned 0x"
            + Integer.toHexString(ptr)
            + (what == WasmtimeStringLists.BAD_LIST ? " for the list" : " for string " + what)
            + ", out of bounds");
  }

  /** The guest ran: check the view against the memory's size before the next access. */
  void invalidate() {
    unchecked = true;
  }

  /**
   * The guest ran, and this is the memory's size in bytes now, as a helper module read it with
   * {@code memory.size} at the end of its call ({@link WasmtimeHelpers}): the view is kept if it
   * has that size, else fetched again at the next access; either way without asking wasmtime.
   */
  void sizeIs(long bytes) {
    if (buffer != null && buffer.capacity() != bytes) {
      buffer = null;
    }
    unchecked = false;
  }

  private ByteBuffer buf() {
    if (buffer == null || (unchecked && currentSize.getAsLong() != buffer.capacity())) {
      buffer = fetch.get();
    }
    unchecked = false;
    return buffer;
  }

  @Override
  public long size() {
    return buf().capacity();
  }

  @Override
  protected byte rawU8(int at) {
    return buf().get(at);
  }

  @Override
  protected short rawU16(int at) {
    return buf().getShort(at);
  }

  @Override
  protected int rawI32(int at) {
    return buf().getInt(at);
  }

  @Override
  protected long rawI64(int at) {
    return buf().getLong(at);
  }

  @Override
  protected byte[] rawBytes(int at, int length) {
    byte[] out = new byte[length];
    buf().get(at, out);
    return out;
  }

  @Override
  protected void rawBytesInto(int at, byte[] into, int offset, int length) {
    buf().get(at, into, offset, length);
  }

  @Override
  protected void rawStoreU8(int at, byte value) {
    buf().put(at, value);
  }

  @Override
  protected void rawStoreU16(int at, short value) {
    buf().putShort(at, value);
  }

  @Override
  protected void rawStoreI32(int at, int value) {
    buf().putInt(at, value);
  }

  @Override
  protected void rawStoreI64(int at, long value) {
    buf().putLong(at, value);
  }

  @Override
  protected void rawStoreBytes(int at, byte[] bytes) {
    buf().put(at, bytes);
  }
}
