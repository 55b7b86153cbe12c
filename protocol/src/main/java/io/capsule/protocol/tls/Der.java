package io.capsule.protocol.tls;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * The few bytes of DER that {@link Pem} writes and reads: a tag-length-value with a definite
 * length, and a cursor over a constructed value's children. Single-byte tags only (all that key
 * structures use). Malformed input is an {@link IllegalArgumentException}.
 */
final class Der {
  private Der() {}

  /** {@code tag} with {@code value}, the length in DER's short or long form. */
  static byte[] tlv(int tag, byte[] value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 6);
    out.write(tag);
    int n = value.length;
    if (n < 0x80) {
      out.write(n);
    } else {
      int bytes = n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write(n >>> (8 * i));
      }
    }
    out.writeBytes(value);
    return out.toByteArray();
  }

  /** A cursor over the values in {@code bytes[from, to)}. */
  static final class Reader {
    private final byte[] bytes;
    private final int end;
    private int pos;
    private int lastStart;

    private Reader(byte[] bytes, int from, int to) {
      this.bytes = bytes;
      this.pos = from;
      this.end = to;
    }

    static Reader of(byte[] bytes) {
      return new Reader(bytes, 0, bytes.length);
    }

    boolean hasMore() {
      return pos < end;
    }

    int peekTag() {
      need(1);
      return bytes[pos] & 0xFF;
    }

    /** The children of the next value, which must have {@code tag}. */
    Reader enter(int tag) {
      int[] v = next(tag);
      return new Reader(bytes, v[0], v[1]);
    }

    /** Steps over the next value, which must have {@code tag}. */
    void skip(int tag) {
      next(tag);
    }

    /** The next value whole (tag, length and content). */
    byte[] raw() {
      int start = pos;
      next(peekTag());
      return Arrays.copyOfRange(bytes, start, pos);
    }

    /** [content start, content end) of the next value; moves past it. */
    private int[] next(int tag) {
      lastStart = pos;
      need(2);
      int t = bytes[pos++] & 0xFF;
      if (t != tag) {
        throw new IllegalArgumentException(
            "DER tag 0x"
                + Integer.toHexString(t)
                + " at "
                + lastStart
                + ", expected 0x"
                + Integer.toHexString(tag));
      }
      int len = bytes[pos++] & 0xFF;
      if (len >= 0x80) {
        int count = len & 0x7F;
        if (count == 0 || count > 4) {
          throw new IllegalArgumentException("DER length of " + count + " bytes at " + lastStart);
        }
        need(count);
        len = 0;
        for (int i = 0; i < count; i++) {
          len = (len << 8) | (bytes[pos++] & 0xFF);
        }
      }
      if (len < 0 || len > end - pos) {
        throw new IllegalArgumentException("DER value at " + lastStart + " runs past its end");
      }
      int start = pos;
      pos += len;
      return new int[] {start, pos};
    }

    private void need(int n) {
      if (end - pos < n) {
        throw new IllegalArgumentException("DER ends early at " + pos);
      }
    }
  }
}
