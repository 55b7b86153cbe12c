package io.capsule.runtime.harness;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The last bytes of the harness's stderr (docs/run-semantics.md §5), for {@code classify-exit} and
 * the trace. Pure. The rendering starts at a line start: when older bytes were dropped mid-line,
 * the partial first line is removed. Invalid UTF-8 becomes U+FFFD.
 */
final class StderrTail {

  private final int capacity;
  private byte[] kept = new byte[0];
  private boolean startsMidLine;

  StderrTail(int capacity) {
    this.capacity = capacity;
  }

  void append(byte[] bytes) {
    if (bytes.length == 0) {
      return;
    }
    byte[] joined = Arrays.copyOf(kept, kept.length + bytes.length);
    System.arraycopy(bytes, 0, joined, kept.length, bytes.length);
    if (joined.length > capacity) {
      int drop = joined.length - capacity;
      startsMidLine = joined[drop - 1] != '\n';
      joined = Arrays.copyOfRange(joined, drop, joined.length);
    }
    kept = joined;
  }

  String render() {
    int from = 0;
    if (startsMidLine) {
      int nl = indexOf(kept, (byte) '\n');
      from = nl < 0 ? kept.length : nl + 1;
    }
    return new String(kept, from, kept.length - from, StandardCharsets.UTF_8);
  }

  private static int indexOf(byte[] bytes, byte b) {
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }
}
