package io.capsule.driver.engine;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A cursor over a WebAssembly binary (core module or component): bytes, LEB128 integers and names
 * as the binary format encodes them. Every read is bounds-checked and a malformed encoding throws
 * {@link Malformed} with the offset, never an index exception. Not thread-safe; cheap to create.
 */
public final class ByteReader {

  /** The binary is not well-formed where it was read; the message names the offset. */
  public static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    public Malformed(String message) {
      super(message);
    }
  }

  private final byte[] bytes;
  private final int end;
  private int pos;

  public ByteReader(byte[] bytes) {
    this(bytes, 0, bytes.length);
  }

  public ByteReader(byte[] bytes, int from, int to) {
    if (from < 0 || to > bytes.length || from > to) {
      throw new IllegalArgumentException("bad range " + from + ".." + to);
    }
    this.bytes = bytes;
    this.pos = from;
    this.end = to;
  }

  public int position() {
    return pos;
  }

  public boolean atEnd() {
    return pos >= end;
  }

  public int remaining() {
    return end - pos;
  }

  public int u8() throws Malformed {
    if (pos >= end) {
      throw new Malformed("unexpected end at offset " + pos);
    }
    return bytes[pos++] & 0xff;
  }

  /** An unsigned LEB128 of at most 32 bits. */
  public int u32() throws Malformed {
    long v = leb(32);
    return (int) v;
  }

  /** An unsigned LEB128 of at most 64 bits (memory64 limits). */
  public long u64() throws Malformed {
    return leb(64);
  }

  private long leb(int bits) throws Malformed {
    int start = pos;
    long result = 0;
    int shift = 0;
    while (true) {
      int b = u8();
      result |= (long) (b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) {
        if (bits < 64 && (result >>> bits) != 0) {
          throw new Malformed("integer too large at offset " + start);
        }
        return result;
      }
      if (shift >= bits) {
        throw new Malformed("integer representation too long at offset " + start);
      }
    }
  }

  /** Copies {@code n} bytes. */
  public byte[] bytes(int n) throws Malformed {
    if (n < 0 || n > end - pos) {
      throw new Malformed("length " + Integer.toUnsignedString(n) + " overruns at offset " + pos);
    }
    byte[] out = Arrays.copyOfRange(bytes, pos, pos + n);
    pos += n;
    return out;
  }

  public void skip(int n) throws Malformed {
    if (n < 0 || n > end - pos) {
      throw new Malformed("length " + Integer.toUnsignedString(n) + " overruns at offset " + pos);
    }
    pos += n;
  }

  /** A length-prefixed UTF-8 name. */
  public String name() throws Malformed {
    int start = pos;
    byte[] raw = bytes(u32());
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(java.nio.ByteBuffer.wrap(raw))
          .toString();
    } catch (CharacterCodingException e) {
      throw new Malformed("name is not UTF-8 at offset " + start);
    }
  }
}
