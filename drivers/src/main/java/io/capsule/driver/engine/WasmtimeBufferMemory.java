package io.capsule.driver.engine;

import io.capsule.driver.wasm.WasmInstance;
import java.nio.ByteBuffer;
import java.util.function.Supplier;

/**
 * A wasmtime memory seen through the binding's little-endian direct buffer, fetched lazily and
 * dropped by {@link #invalidate()} after anything that may grow the memory (the buffer goes stale
 * on growth): after every guest call. One class for a single instance and for a WASI graph.
 */
class WasmtimeBufferMemory extends CheckedGuestMemory {

  private final Supplier<ByteBuffer> fetch;
  private ByteBuffer buffer;

  WasmtimeBufferMemory(WasmInstance owner, Supplier<ByteBuffer> fetch) {
    super(owner);
    this.fetch = fetch;
  }

  void invalidate() {
    buffer = null;
  }

  private ByteBuffer buf() {
    if (buffer == null) {
      buffer = fetch.get();
    }
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
