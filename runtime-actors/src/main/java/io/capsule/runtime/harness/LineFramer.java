package io.capsule.runtime.harness;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Turns the harness's stdout bytes into lines (docs/run-semantics.md §5). Pure and incremental:
 * chunks may split anywhere (inside a multi-byte character, between {@code \r} and {@code \n}) and
 * the lines are the same as for the whole stream at once.
 *
 * <ul>
 *   <li>A line ends at {@code \n}; the {@code \n} and one {@code \r} before it are removed.
 *   <li>Invalid UTF-8 becomes U+FFFD. Splitting on the byte {@code \n} before decoding is safe:
 *       0x0A never occurs inside a multi-byte UTF-8 sequence.
 *   <li>Empty lines are kept (the driver decides what they mean).
 *   <li>Bytes after the last {@code \n} are never emitted: at EOF they are dropped ({@link
 *       #pendingBytes()} says how many, for the trace).
 *   <li>A line longer than the cap is cut at the cap, backed off to the start of a character so
 *       that the cut does not invent a U+FFFD; the rest up to its {@code \n} is skipped and not
 *       buffered. The line is emitted when its {@code \n} arrives, with its original length, so a
 *       cut line that never ends is dropped like any unterminated tail.
 * </ul>
 *
 * <p>Memory: at most {@code cap + 1} bytes are buffered, grown on demand, and only for a line that
 * spans chunks: a line whole in one chunk is decoded from the chunk (see {@link #bufferCapacity}).
 *
 * <p>Speed: the newline is looked for 8 bytes at a time (a {@code long} read from the chunk, the
 * bytes equal to {@code \n} found with word arithmetic), since scanning the ~600-byte lines of a
 * harness byte by byte was a visible share of the pump's time per line.
 */
public final class LineFramer {

  /**
   * One framed line.
   *
   * @param text the decoded line, at most the cap in UTF-8 bytes
   * @param originalBytes the line's length in bytes when it was cut, 0 when it was not
   */
  public record Line(String text, long originalBytes) {
    public boolean isCut() {
      return originalBytes > 0;
    }
  }

  private static final int INITIAL_BUFFER = 8 * 1024;

  /** Eight bytes of a chunk as one {@code long}, the first byte lowest (any alignment). */
  private static final VarHandle WORDS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final long NEWLINES = 0x0A0A_0A0A_0A0A_0A0AL;
  private static final long LOW_SEVEN_BITS = 0x7F7F_7F7F_7F7F_7F7FL;

  private final int cap;
  private byte[] buf;
  private int len;
  private boolean skipping;
  private long lineBytes;
  private byte lastByte;

  public LineFramer(int capBytes) {
    if (capBytes < 1) {
      throw new IllegalArgumentException("the line cap must be at least 1 byte");
    }
    this.cap = capBytes;
    this.buf = new byte[Math.min(INITIAL_BUFFER, capBytes + 1)];
  }

  public List<Line> feed(byte[] chunk) {
    return feed(chunk, 0, chunk.length);
  }

  /** Feeds the next bytes of the stream; returns the lines they completed, in order. */
  public List<Line> feed(byte[] chunk, int offset, int length) {
    List<Line> out = new ArrayList<>();
    int i = offset;
    int end = offset + length;
    while (i < end) {
      int nl = indexOfNewline(chunk, i, end);
      if (nl < 0) {
        append(chunk, i, end - i);
        break;
      }
      out.add(lineBytes == 0 ? wholeLine(chunk, i, nl) : finishLine(chunk, i, nl));
      i = nl + 1;
    }
    return out;
  }

  /** The buffer's size now: what a line spanning chunks made it grow to (for the tests). */
  int bufferCapacity() {
    return buf.length;
  }

  /** Bytes of the line in progress (what EOF would drop now). */
  public long pendingBytes() {
    return lineBytes;
  }

  /**
   * The first {@code \n} in {@code chunk[from, end)}, or -1. Per word: {@code x} has a zero byte
   * exactly where the word has a {@code \n}; {@code (x & 0x7F..) + 0x7F..} sets a byte's top bit
   * when its low seven bits are not all zero (no carry leaves a byte: at most 0xFE), so the top
   * bits of {@code ~(that | x | 0x7F..)} are set for the zero bytes and only for them, and the
   * lowest one is the first newline.
   */
  static int indexOfNewline(byte[] chunk, int from, int end) {
    int i = from;
    for (; i <= end - Long.BYTES; i += Long.BYTES) {
      long x = (long) WORDS.get(chunk, i) ^ NEWLINES;
      long zeros = ~(((x & LOW_SEVEN_BITS) + LOW_SEVEN_BITS) | x | LOW_SEVEN_BITS);
      if (zeros != 0) {
        return i + (Long.numberOfTrailingZeros(zeros) >>> 3);
      }
    }
    for (; i < end; i++) {
      if (chunk[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private void append(byte[] chunk, int from, int n) {
    if (n == 0) {
      return;
    }
    lineBytes += n;
    lastByte = chunk[from + n - 1];
    if (skipping) {
      return;
    }
    // Keep cap + 1 bytes: the byte after the cap may be the '\r' of a line of exactly cap bytes.
    int room = cap + 1 - len;
    int take = Math.min(room, n);
    ensureCapacity(len + take);
    System.arraycopy(chunk, from, buf, len, take);
    len += take;
    if (take < n) {
      skipping = true;
    }
  }

  private void ensureCapacity(int needed) {
    if (needed > buf.length) {
      int grown = (int) Math.min((long) cap + 1, Math.max(needed, 2L * buf.length));
      buf = Arrays.copyOf(buf, grown);
    }
  }

  /**
   * A line that starts and ends in this chunk ({@code chunk[from, nl)}, its {@code \n} at {@code
   * nl}): decoded straight from the chunk, never copied into the buffer first (issue #15: nearly
   * every line of a harness's JSON is whole in one 64 KiB pipe read).
   */
  private Line wholeLine(byte[] chunk, int from, int nl) {
    int contentBytes = nl - from - (nl > from && chunk[nl - 1] == '\r' ? 1 : 0);
    if (contentBytes > cap) {
      return new Line(
          new String(chunk, from, cutPoint(chunk, from, cap), StandardCharsets.UTF_8),
          contentBytes);
    }
    return new Line(new String(chunk, from, contentBytes, StandardCharsets.UTF_8), 0);
  }

  /**
   * The line in progress, completed by {@code chunk[from, nl)} and the {@code \n} at {@code nl}.
   */
  private Line finishLine(byte[] chunk, int from, int nl) {
    append(chunk, from, nl - from);
    long contentBytes = lineBytes - (lastByte == '\r' ? 1 : 0);
    Line line;
    if (contentBytes > cap) {
      line =
          new Line(new String(buf, 0, cutPoint(buf, 0, cap), StandardCharsets.UTF_8), contentBytes);
    } else {
      line = new Line(new String(buf, 0, (int) contentBytes, StandardCharsets.UTF_8), 0);
    }
    len = 0;
    lineBytes = 0;
    skipping = false;
    lastByte = 0;
    return line;
  }

  /**
   * The cap, moved back to the start of the character the cap falls into (at most 3 bytes), for the
   * line starting at {@code bytes[start]}, which holds more than {@code cap} bytes.
   */
  private static int cutPoint(byte[] bytes, int start, int cap) {
    int k = cap;
    while (k > 0 && k > cap - 3 && isContinuation(bytes[start + k])) {
      k--;
    }
    return isContinuation(bytes[start + k]) || k == 0 ? cap : k;
  }

  private static boolean isContinuation(byte b) {
    return (b & 0xC0) == 0x80;
  }
}
