package io.capsule.driver.abi;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/** Test helpers over ABI values: a comparable form (byte arrays by content) and flat-value text. */
final class AbiValues {
  private AbiValues() {}

  /**
   * The value with every {@code byte[]} replaced by its hex, so {@code equals} compares content.
   */
  static Object comparable(Object v) {
    if (v instanceof byte[] b) {
      return "bytes:" + HexFormat.of().formatHex(b);
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      l.forEach(e -> out.add(comparable(e)));
      return out;
    }
    if (v instanceof Optional<?> o) {
      return o.map(AbiValues::comparable);
    }
    if (v instanceof WitRecord r) {
      List<Object> out = new ArrayList<>();
      r.fields().forEach(e -> out.add(comparable(e)));
      return new WitRecord(out);
    }
    if (v instanceof WitVariant w) {
      return new WitVariant(w.caseIndex(), w.payload().map(AbiValues::comparable));
    }
    return v;
  }

  /** Flat values as space-separated unsigned hex ({@code "1 10 2"}). */
  static String flat(long[] values) {
    StringBuilder out = new StringBuilder();
    for (long v : values) {
      if (out.length() > 0) {
        out.append(' ');
      }
      out.append(Long.toHexString(v));
    }
    return out.toString();
  }

  static long[] flat(String text) {
    if (text.isBlank()) {
      return new long[0];
    }
    String[] parts = text.trim().split("\\s+");
    long[] values = new long[parts.length];
    for (int i = 0; i < parts.length; i++) {
      values[i] = Long.parseUnsignedLong(parts[i], 16);
    }
    return values;
  }
}
