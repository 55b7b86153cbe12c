package io.capsule.runtime.core;

import java.time.Instant;

/**
 * {@link Instant#toString()} (ISO-8601, UTC, the fraction in groups of three digits, none when it
 * is zero) with the date and time of the second formatted once per second: a run writes thousands
 * of trace lines a second, and the formatter's date arithmetic per line was a visible share of the
 * trace's cost (issue #15). The text is the same as {@code toString}'s for every instant.
 *
 * <p>Threading: safe from any thread; the cache is one immutable pair, replaced whole.
 */
final class Timestamps {

  /** The last second formatted: its epoch second and its text without the closing {@code Z}. */
  private record Second(long epochSecond, String text) {}

  private static volatile Second last = new Second(Long.MIN_VALUE, "");

  private Timestamps() {}

  static String iso(Instant at) {
    Second s = last;
    if (s.epochSecond() != at.getEpochSecond()) {
      // toString of a whole second always prints the seconds and no fraction, then 'Z'.
      String whole = Instant.ofEpochSecond(at.getEpochSecond()).toString();
      s = new Second(at.getEpochSecond(), whole.substring(0, whole.length() - 1));
      last = s;
    }
    int nano = at.getNano();
    if (nano == 0) {
      return s.text() + 'Z';
    }
    StringBuilder b = new StringBuilder(s.text().length() + 11).append(s.text()).append('.');
    if (nano % 1_000_000 == 0) {
      digits(b, nano / 1_000_000, 3);
    } else if (nano % 1_000 == 0) {
      digits(b, nano / 1_000, 6);
    } else {
      digits(b, nano, 9);
    }
    return b.append('Z').toString();
  }

  /** {@code value} in exactly {@code width} digits, zero-padded on the left. */
  private static void digits(StringBuilder b, int value, int width) {
    String v = Integer.toString(value);
    for (int i = v.length(); i < width; i++) {
      b.append('0');
    }
    b.append(v);
  }
}
