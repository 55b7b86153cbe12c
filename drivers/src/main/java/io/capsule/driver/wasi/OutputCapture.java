package io.capsule.driver.wasi;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What a driver wrote to its stdout or stderr since the last drain, kept up to {@link #CAP_BYTES}
 * per stream; the rest is counted and dropped, so a driver that writes without end costs the host
 * nothing but the count. {@link #drain()} turns it into run notes. Not thread-safe.
 */
public final class OutputCapture {

  /** Bytes kept per stream between two drains (64 KiB); later bytes are dropped and counted. */
  public static final int CAP_BYTES = 64 * 1024;

  private final String stream;
  private final byte[] kept = new byte[CAP_BYTES];
  private int size;
  private long dropped;

  public OutputCapture(String stream) {
    this.stream = stream;
  }

  /** Accepts every byte: keeps what fits under the cap, counts the rest. */
  public void write(byte[] bytes) {
    write(bytes, bytes.length);
  }

  /** How many more bytes would be kept; the caller need not even read the rest. */
  public int room() {
    return CAP_BYTES - size;
  }

  /**
   * Accepts a write of {@code total} bytes of which the caller read only the first {@code
   * head.length} (at most {@link #room()} are kept); the rest is counted as dropped.
   */
  public void write(byte[] head, long total) {
    int fits = Math.min(head.length, CAP_BYTES - size);
    System.arraycopy(head, 0, kept, size, fits);
    size += fits;
    dropped += total - fits;
  }

  /** Counts {@code n} zero bytes ({@code write-zeroes}) without keeping them. */
  public void writeZeroes(long n) {
    int fits = (int) Math.min(n, CAP_BYTES - size);
    java.util.Arrays.fill(kept, size, size + fits, (byte) 0);
    size += fits;
    dropped += n - fits;
  }

  /**
   * The notes since the last drain: one per non-empty line, {@code "driver stdout: <line>"}, then
   * one saying how many bytes were dropped past the cap, if any. Resets the stream.
   */
  public List<String> drain() {
    List<String> notes = new ArrayList<>();
    if (size == 0 && dropped == 0) {
      return notes;
    }
    String text = new String(kept, 0, size, StandardCharsets.UTF_8);
    for (String line : text.split("\n", -1)) {
      String trimmed = line.strip();
      if (!trimmed.isEmpty()) {
        notes.add("driver " + stream + ": " + trimmed);
      }
    }
    if (dropped > 0) {
      notes.add(
          "driver "
              + stream
              + ": "
              + dropped
              + " more bytes dropped (the runtime keeps "
              + CAP_BYTES
              + " bytes per stream between calls)");
    }
    size = 0;
    dropped = 0;
    return notes;
  }
}
