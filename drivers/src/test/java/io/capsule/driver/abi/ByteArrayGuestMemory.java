package io.capsule.driver.abi;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.GuestMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.function.IntUnaryOperator;

/**
 * A guest memory over a Java byte array with a bump allocator as its {@code cabi_realloc}, for
 * tests: what a well-behaved guest's memory looks like, minus the engine. Every {@code realloc}
 * call is recorded; a test may make the allocator misbehave with {@link #overrideRealloc}.
 */
public final class ByteArrayGuestMemory implements GuestMemory {
  /** Allocation starts here, so that address 0 is never handed out. */
  public static final int HEAP_BASE = 16;

  /** One recorded {@code cabi_realloc(oldPtr, oldSize, align, newSize)} and its result. */
  public record Realloc(int oldPtr, int oldSize, int align, int newSize, int result) {}

  private final byte[] bytes;
  private final ByteBuffer view;
  private final List<Realloc> reallocs = new ArrayList<>();
  private int next = HEAP_BASE;
  private IntUnaryOperator override;

  public ByteArrayGuestMemory(int size) {
    bytes = new byte[size];
    view = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Makes every later realloc return {@code f(newSize)} instead of a fresh block. */
  public void overrideRealloc(IntUnaryOperator f) {
    override = f;
  }

  public List<Realloc> reallocs() {
    return reallocs;
  }

  /** Where the next allocation will start (before alignment). */
  public int top() {
    return next;
  }

  /** Sets the next allocation's start, e.g. to place a test image right below it. */
  public void top(int address) {
    next = address;
  }

  /** Writes hex bytes ({@code "01 00 ff"}, spaces ignored) at {@code address}. */
  public void write(int address, String hex) {
    storeBytes(address, HexFormat.of().parseHex(hex.replace(" ", "")));
  }

  /** {@code length} bytes at {@code address} as lowercase hex without separators. */
  public String hex(int address, int length) {
    return HexFormat.of().formatHex(loadBytes(address, length));
  }

  @Override
  public long size() {
    return bytes.length;
  }

  private int check(int address, long length) {
    long start = Integer.toUnsignedLong(address);
    if (start + length > bytes.length) {
      throw new AbiViolation(
          Diagnostic.of(
              Code.E_RUN_034,
              "access of " + length + " bytes at 0x" + Long.toHexString(start) + " out of bounds"));
    }
    return address;
  }

  @Override
  public byte loadU8(int address) {
    return bytes[check(address, 1)];
  }

  @Override
  public short loadU16(int address) {
    return view.getShort(check(address, 2));
  }

  @Override
  public int loadI32(int address) {
    return view.getInt(check(address, 4));
  }

  @Override
  public long loadI64(int address) {
    return view.getLong(check(address, 8));
  }

  @Override
  public byte[] loadBytes(int address, int length) {
    check(address, Integer.toUnsignedLong(length));
    return Arrays.copyOfRange(bytes, address, address + length);
  }

  @Override
  public void storeU8(int address, byte value) {
    bytes[check(address, 1)] = value;
  }

  @Override
  public void storeU16(int address, short value) {
    view.putShort(check(address, 2), value);
  }

  @Override
  public void storeI32(int address, int value) {
    view.putInt(check(address, 4), value);
  }

  @Override
  public void storeI64(int address, long value) {
    view.putLong(check(address, 8), value);
  }

  @Override
  public void storeBytes(int address, byte[] data) {
    check(address, data.length);
    System.arraycopy(data, 0, bytes, address, data.length);
  }

  @Override
  public int realloc(int oldPtr, int oldSize, int align, int newSize) {
    int result;
    if (override != null) {
      result = override.applyAsInt(newSize);
    } else {
      int start = (next + align - 1) / align * align;
      check(start, newSize);
      next = start + newSize;
      if (oldPtr != 0) {
        System.arraycopy(bytes, oldPtr, bytes, start, Math.min(oldSize, newSize));
      }
      result = start;
    }
    reallocs.add(new Realloc(oldPtr, oldSize, align, newSize, result));
    return result;
  }
}
