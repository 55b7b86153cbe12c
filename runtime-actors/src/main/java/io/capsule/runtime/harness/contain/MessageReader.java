package io.capsule.runtime.harness.contain;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * Reads HTTP/1.1 messages off one byte stream, for the egress proxy: a head up to its empty line,
 * then a body as its {@link BodyFraming} says, copied to a sink as it arrives. A chunked body is
 * copied as sent, chunk-size lines and trailers included: only their grammar and sizes are read, to
 * find the end. Bytes read past the end of a message stay buffered for the next one (a pipelined
 * request). No threads and no sockets: the owner passes the streams and closes them.
 *
 * <p>Bounded: a head (leading empty lines included) and a trailer section of at most the {@code
 * cap} given, a chunk-size line of at most {@link #CHUNK_LINE_CAP}; the buffer never grows.
 */
final class MessageReader {

  /**
   * Longest chunk-size line, extensions and CRLF included: a size is at most 16 hex digits, and no
   * client in use sends extensions; 4 KiB leaves room for some without letting a line grow
   * unbounded.
   */
  static final int CHUNK_LINE_CAP = 4096;

  /** What {@link #readHead} found. */
  sealed interface Head {
    /** A head, up to and including its empty line. */
    record Read(byte[] bytes) implements Head {}

    /** The stream ended before a head began (or in the middle of one). */
    record End() implements Head {}

    /** No empty line within the cap. */
    record TooLarge() implements Head {}
  }

  private final InputStream in;
  private final byte[] buf;
  private int start;
  private int end;

  /** {@code bufferSize} must be at least the largest head cap this reader is asked for. */
  MessageReader(InputStream in, int bufferSize) {
    this.in = in;
    this.buf = new byte[Math.max(bufferSize, CHUNK_LINE_CAP)];
  }

  /** The next head, empty lines before it skipped (RFC 9112 §2.2), at most {@code cap} bytes. */
  Head readHead(int cap) throws IOException {
    int skipped = 0;
    int scanned = 0;
    while (true) {
      while (scanned < end - start && skipped == scanned) {
        byte b = buf[start + scanned];
        if (b != '\r' && b != '\n') {
          break;
        }
        skipped++;
        scanned++;
      }
      for (; scanned < end - start; scanned++) {
        int i = start + scanned;
        if (buf[i] == '\n' && scanned > skipped && endsEmptyLine(i, start + skipped)) {
          byte[] head = Arrays.copyOfRange(buf, start + skipped, i + 1);
          start = i + 1;
          return new Head.Read(head);
        }
      }
      if (end - start >= cap) {
        return new Head.TooLarge();
      }
      if (fill(cap) < 0) {
        return new Head.End();
      }
    }
  }

  /** The LF at {@code i} ends an empty line: the byte before it is LF, or CR after an LF. */
  private boolean endsEmptyLine(int i, int headStart) {
    if (i - 1 >= headStart && buf[i - 1] == '\n') {
      return true;
    }
    return i - 2 >= headStart && buf[i - 1] == '\r' && buf[i - 2] == '\n';
  }

  /**
   * Copies a body framed as {@code framing} to {@code out}, write by write as bytes arrive.
   *
   * @throws MalformedHttp a chunk-size line or trailer section that breaks the grammar or its cap
   * @throws EOFException the stream ended before the body did
   */
  void copyBody(BodyFraming framing, OutputStream out, int trailerCap) throws IOException {
    if (framing instanceof BodyFraming.Length l) {
      copy(l.bytes(), out);
    } else if (framing instanceof BodyFraming.Chunked) {
      copyChunked(out, trailerCap);
    } else if (framing instanceof BodyFraming.UntilClose) {
      while (end > start || fill(buf.length) >= 0) {
        out.write(buf, start, end - start);
        start = end;
      }
    }
  }

  private void copyChunked(OutputStream out, int trailerCap) throws IOException {
    while (true) {
      int lineEnd = line(CHUNK_LINE_CAP, "a chunk-size line");
      long size = chunkSize(buf, start, lineEnd - 1);
      out.write(buf, start, lineEnd + 1 - start);
      start = lineEnd + 1;
      if (size == 0) {
        break;
      }
      copy(size, out);
      while (end - start < 2) {
        if (fill(2) < 0) {
          throw new EOFException("the stream ended after a chunk's data");
        }
      }
      if (buf[start] != '\r' || buf[start + 1] != '\n') {
        throw new MalformedHttp("a chunk is longer than its size says (no CRLF after its data)");
      }
      out.write(buf, start, 2);
      start += 2;
    }
    int trailers = 0;
    while (true) {
      int lineEnd = line(trailerCap - trailers, "the trailer section");
      int length = lineEnd + 1 - start;
      out.write(buf, start, length);
      start = lineEnd + 1;
      trailers += length;
      if (length == 2) {
        return;
      }
    }
  }

  /**
   * Finds the LF ending the next line, which must end with CRLF and be at most {@code cap} bytes;
   * returns its index in the buffer (the line starts at {@code start}).
   */
  private int line(int cap, String what) throws IOException {
    int scanned = 0;
    while (true) {
      for (; scanned < end - start && scanned < cap; scanned++) {
        if (buf[start + scanned] == '\n') {
          int lf = start + scanned;
          if (scanned == 0 || buf[lf - 1] != '\r') {
            throw new MalformedHttp(what + " does not end with CRLF");
          }
          return lf;
        }
      }
      if (scanned >= cap) {
        throw new MalformedHttp(what + " is over " + cap + " bytes");
      }
      if (fill(cap) < 0) {
        throw new EOFException("the stream ended inside " + what);
      }
    }
  }

  /**
   * {@code chunk-size [chunk-ext]} in {@code bytes[from, crAt)}: 1 to 16 hex digits whose value
   * fits a long, then nothing or {@code ;} extensions without control characters.
   */
  static long chunkSize(byte[] bytes, int from, int crAt) throws MalformedHttp {
    int i = from;
    long size = 0;
    while (i < crAt && Character.digit(bytes[i], 16) >= 0) {
      if (i - from == 16 || size > (Long.MAX_VALUE >> 4)) {
        throw new MalformedHttp("a chunk size over 16 hex digits or past 2^63");
      }
      size = (size << 4) | Character.digit(bytes[i], 16);
      i++;
    }
    if (i == from) {
      throw new MalformedHttp("a chunk-size line without a hexadecimal size");
    }
    int ext = i;
    while (ext < crAt && (bytes[ext] == ' ' || bytes[ext] == '\t')) {
      ext++;
    }
    if (ext < crAt && bytes[ext] != ';') {
      throw new MalformedHttp("a chunk size followed by something other than ';' extensions");
    }
    for (int j = ext; j < crAt; j++) {
      if ((bytes[j] < 0x20 && bytes[j] != '\t') || bytes[j] == 0x7f) {
        throw new MalformedHttp("a control character in a chunk extension");
      }
    }
    return size;
  }

  private void copy(long count, OutputStream out) throws IOException {
    long left = count;
    while (left > 0) {
      if (start == end && fill(buf.length) < 0) {
        throw new EOFException("the stream ended " + left + " bytes before the body's end");
      }
      int n = (int) Math.min(left, end - start);
      out.write(buf, start, n);
      start += n;
      left -= n;
    }
  }

  /** Whether bytes past the last message are buffered. */
  boolean hasBuffered() {
    return end > start;
  }

  /** The buffered bytes, taken (what a CONNECT client sent right after its head). */
  byte[] takeBuffered() {
    byte[] rest = Arrays.copyOfRange(buf, start, end);
    start = end;
    return rest;
  }

  /**
   * Reads once more, keeping the unread bytes at the front when the buffer's tail is short of
   * {@code want} bytes past {@code start}. Returns what was read, or -1 at the stream's end.
   */
  private int fill(int want) throws IOException {
    if (start == end) {
      start = 0;
      end = 0;
    } else if (start > 0 && buf.length - start < Math.min(want, buf.length)) {
      System.arraycopy(buf, start, buf, 0, end - start);
      end -= start;
      start = 0;
    }
    if (end == buf.length) {
      throw new IllegalStateException("the buffer is full: a cap above the buffer size");
    }
    int n = in.read(buf, end, buf.length - end);
    if (n > 0) {
      end += n;
    }
    return n;
  }
}
