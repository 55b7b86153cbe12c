package io.capsule.bench.hub;

import java.util.Arrays;

/**
 * Exact percentiles of a set of latencies (nanoseconds), by sorting them all: the benches keep
 * every sample (10,000 events × 50 readers is 4 MB of longs), so no histogram's rounding is needed.
 *
 * @param count how many samples
 */
record Percentiles(int count, long p50, long p99, long max) {

  /** The nearest-rank percentiles of {@code samples} (which is sorted in place). */
  static Percentiles of(long[] samples) {
    if (samples.length == 0) {
      throw new IllegalArgumentException("no samples");
    }
    Arrays.sort(samples);
    return new Percentiles(
        samples.length, rank(samples, 50), rank(samples, 99), samples[samples.length - 1]);
  }

  /** Nearest rank: the smallest sample with at least {@code pct} % of the samples at or below. */
  private static long rank(long[] sorted, int pct) {
    int r = (int) Math.ceil(pct / 100.0 * sorted.length);
    return sorted[Math.max(r, 1) - 1];
  }

  /** {@code p50 / p99 / max} in milliseconds with two decimals. */
  String millis() {
    return ms(p50) + " / " + ms(p99) + " / " + ms(max) + " ms";
  }

  static String ms(long nanos) {
    return String.format("%.2f", nanos / 1e6);
  }
}
