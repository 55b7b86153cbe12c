package io.capsule.driver.engine;

import com.dylibso.chicory.runtime.Memory;

/** Guest memory of a Chicory instance; Chicory's accessors are little-endian already. */
final class ChicoryMemory extends CheckedGuestMemory {

  private final java.util.function.Supplier<Memory> memory;

  ChicoryMemory(ChicoryInstance owner) {
    this(owner, owner::rawMemory);
  }

  /** The memory of a graph's main instance; {@code owner} is what {@link #realloc} calls. */
  ChicoryMemory(
      io.capsule.driver.wasm.WasmInstance owner, java.util.function.Supplier<Memory> memory) {
    super(owner);
    this.memory = memory;
  }

  private Memory mem() {
    return memory.get();
  }

  @Override
  public long size() {
    return (long) mem().pages() * CoreModule.PAGE;
  }

  @Override
  protected byte rawU8(int at) {
    return mem().read(at);
  }

  @Override
  protected short rawU16(int at) {
    return mem().readShort(at);
  }

  @Override
  protected int rawI32(int at) {
    return mem().readInt(at);
  }

  @Override
  protected long rawI64(int at) {
    return mem().readLong(at);
  }

  @Override
  protected byte[] rawBytes(int at, int length) {
    return mem().readBytes(at, length);
  }

  @Override
  protected void rawStoreU8(int at, byte value) {
    mem().writeByte(at, value);
  }

  @Override
  protected void rawStoreU16(int at, short value) {
    mem().writeShort(at, value);
  }

  @Override
  protected void rawStoreI32(int at, int value) {
    mem().writeI32(at, value);
  }

  @Override
  protected void rawStoreI64(int at, long value) {
    mem().writeLong(at, value);
  }

  @Override
  protected void rawStoreBytes(int at, byte[] bytes) {
    mem().write(at, bytes);
  }
}
