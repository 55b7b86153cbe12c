package io.capsule.driver.abi;

import java.util.Arrays;

/** A growable list of flat core values (raw bits) being lowered. */
final class FlatOut {
  private long[] values = new long[8];
  private int size;

  void add(long bits) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = bits;
  }

  int size() {
    return size;
  }

  long[] toArray() {
    return Arrays.copyOf(values, size);
  }
}
