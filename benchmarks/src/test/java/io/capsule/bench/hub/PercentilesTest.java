package io.capsule.bench.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** Nearest-rank percentiles, as the SSE figures are read: a table of inputs and answers. */
class PercentilesTest {
  private record Case(long[] samples, long p50, long p99, long max) {}

  @Test
  void nearestRankOverATable() {
    Case[] cases = {
      new Case(new long[] {7}, 7, 7, 7),
      new Case(new long[] {3, 1, 2}, 2, 3, 3), // unsorted in; ranks ceil(1.5)=2, ceil(2.97)=3
      new Case(LongStream.rangeClosed(1, 100).toArray(), 50, 99, 100),
      new Case(LongStream.rangeClosed(1, 1000).map(i -> 1001 - i).toArray(), 500, 990, 1000),
      // One slow outlier in 200 is above p99 (rank 198), so only max shows it.
      new Case(LongStream.range(0, 200).map(i -> i == 17 ? 9_000 : 5).toArray(), 5, 5, 9_000),
      // Two in 100 are at p99.
      new Case(LongStream.range(0, 100).map(i -> i < 2 ? 80 : 1).toArray(), 1, 80, 80),
    };
    for (Case c : cases) {
      Percentiles p = Percentiles.of(c.samples().clone());
      assertEquals(c.samples().length, p.count());
      assertEquals(c.p50(), p.p50(), "p50");
      assertEquals(c.p99(), p.p99(), "p99");
      assertEquals(c.max(), p.max(), "max");
    }
  }

  @Test
  void noSamplesIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Percentiles.of(new long[0]));
  }

  @Test
  void millisecondsWithTwoDecimals() {
    assertEquals(
        "1.50 / 20.00 / 300.25 ms",
        new Percentiles(3, 1_500_000, 20_000_000, 300_250_000).millis());
  }
}
