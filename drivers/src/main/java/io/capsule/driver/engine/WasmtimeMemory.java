package io.capsule.driver.engine;

import java.nio.ByteBuffer;

/**
 * Guest memory of a wasmtime instance through the binding's direct buffer. The buffer goes stale
 * when the memory grows, so it is dropped after every guest call and fetched again on next use.
 */
final class WasmtimeMemory extends CheckedGuestMemory {

  private final WasmtimeInstance owner;
  private ByteBuffer buffer;

  WasmtimeMemory(WasmtimeInstance owner) {
    super(owner);
    this.owner = owner;
  }

  void invalidate() {
    buffer = null;
  }

  private ByteBuffer buf() {
    if (buffer == null) {
      buffer = owner.buffer();
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
