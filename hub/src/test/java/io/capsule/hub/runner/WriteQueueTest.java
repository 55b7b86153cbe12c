package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One write per key in flight; what arrives meanwhile leaves as the next batch, groups unsplit, at
 * most {@code maxBatch} items unless one group alone is larger.
 */
class WriteQueueTest {

  /**
   * Steps: {@code o:K:a.b} offers the group [a, b] for key K; {@code d:K} reports K's write done.
   * The expected column lists what each step starts ({@code -} for nothing), steps split by space.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          first offer starts at once            | o:T:1               | 1
          a second key does not wait            | o:T:1 o:U:1         | 1 1
          same key waits for the write          | o:T:1 o:T:2         | 1 -
          waiting groups leave as one batch     | o:T:1 o:T:2 o:T:3 d:T | 1 - - 2.3
          done with nothing waiting idles key   | o:T:1 d:T o:T:2     | 1 - 2
          batch closes at the bound             | o:T:1 o:T:2.3 o:T:4.5 d:T d:T | 1 - - 2.3 4.5
          a group larger than the bound is kept | o:T:1 o:T:2.3.4.5 d:T | 1 - 2.3.4.5
          keys do not mix                       | o:T:1 o:U:a o:T:2 o:U:b d:U d:T | 1 a - - b 2
          """)
  void batchesPerKeyInOrder(String why, String steps, String expected) {
    WriteQueue<String> q = new WriteQueue<>(3);
    List<String> got = new ArrayList<>();
    for (String step : steps.trim().split(" ")) {
      String[] p = step.split(":");
      List<String> started =
          p[0].equals("o") ? q.offer(p[1], Arrays.asList(p[2].split("\\."))) : q.done(p[1]);
      got.add(started.isEmpty() ? "-" : String.join(".", started));
    }
    assertEquals(expected.trim(), String.join(" ", got), why);
  }

  @Test
  void countsWaitingItemsAndDrainsThem() {
    WriteQueue<String> q = new WriteQueue<>(10);
    q.offer("T", List.of("1"));
    q.offer("T", List.of("2", "3"));
    q.offer("U", List.of("a"));
    assertEquals(2, q.waiting());
    assertTrue(q.busy("T"));
    assertEquals(List.of("2", "3"), q.drain());
    assertEquals(0, q.waiting());
    assertFalse(q.busy("T"));
  }

  @Test
  void aDoneWithoutAWriteIsAnError() {
    WriteQueue<String> q = new WriteQueue<>(10);
    assertThrows(IllegalStateException.class, () -> q.done("T"));
  }
}
