package io.capsule.runtime.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SlotBookTest {

  /**
   * Each row: capacity, queue bound, a script of steps ({@code +k} acquire, {@code -k} withdraw),
   * what each step answered ({@code G}ranted, {@code Q}ueued, {@code R}efused, or for a withdraw
   * the key granted next, {@code .} for none), and the peak.
   */
  @ParameterizedTest(name = "{0} slots, {1} waiting: {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          1 | 0 | +a +b -a +b          | G R . G     | 1
          1 | 1 | +a +b +c -a -b       | G Q R b .   | 1
          2 | 2 | +a +b +c +d +e -b -a | G G Q Q R c d | 2
          2 | 1 | +a +a +b +c +c       | G G G Q Q   | 2
          1 | 2 | +a +b +c -b -a       | G Q Q . c   | 1
          3 | 0 | +a +b -x +c          | G G . G     | 3
          """)
  void grantsInArrivalOrderAndNeverAboveTheCapacity(
      int capacity, int queueMax, String script, String expected, int peak) {
    SlotBook<String> book = new SlotBook<>(capacity, queueMax);
    List<String> answers = new ArrayList<>();
    for (String step : script.trim().split("\\s+")) {
      String key = step.substring(1);
      if (step.charAt(0) == '+') {
        answers.add(book.acquire(key).name().substring(0, 1));
      } else {
        answers.add(book.withdraw(key).orElse("."));
      }
      assertEquals(true, book.held() <= capacity, "held " + book.held() + " after " + step);
    }
    assertEquals(expected.trim(), String.join(" ", answers));
    assertEquals(peak, book.peak());
  }

  @ParameterizedTest
  @CsvSource({"0, 1", "-1, 0", "1, -1"})
  void refusesAnImpossibleBook(int capacity, int queueMax) {
    assertThrows(IllegalArgumentException.class, () -> new SlotBook<String>(capacity, queueMax));
  }
}
