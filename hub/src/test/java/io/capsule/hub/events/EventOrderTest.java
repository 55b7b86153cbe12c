package io.capsule.hub.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The order of a watcher's events from two feeds: each id once, in order, none after the report,
 * and a bounded number held while a gap waits to be filled. Ids offered are written {@code 3}; the
 * report {@code 4r}.
 */
class EventOrderTest {

  @ParameterizedTest(name = "after {0}, offered {1} -> sent {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # after | offered (both feeds, as they interleave) | sent           | held at the end
          0       | 1 2 3                                     | 1 2 3          | 0
          0       | 1 1 2 2 3                                 | 1 2 3          | 0
          0       | 3 1 2                                     | 1 2 3          | 0
          0       | 2 3                                       | -              | 2
          2       | 1 2 3 4                                   | 3 4            | 0
          0       | 1 2 3r 4                                  | 1 2 3r         | 0
          0       | 1 3r 2                                    | 1 2 3r         | 0
          0       | 1 4 5 2r 3                                | 1 2r           | 0
          5       | 1 2 3                                     | -              | 0
          0       | 1 2 3 1 2 3 4                             | 1 2 3 4        | 0
          """)
  void sendsEachIdOnceInOrderAndNothingAfterTheReport(
      long after, String offered, String sent, int held) {
    EventOrder order = new EventOrder(after, 10);
    List<String> out = new ArrayList<>();
    for (String word : offered.trim().split(" +")) {
      EventOrder.Step step = order.offer(entry(word));
      assertEquals(false, step.overflow(), word);
      step.send().forEach(e -> out.add(e.id() + (e.isReport() ? "r" : "")));
    }
    assertEquals(sent.trim().equals("-") ? List.of() : Arrays.asList(sent.trim().split(" +")), out);
    assertEquals(held, order.held());
  }

  @ParameterizedTest(name = "max {0}, offered {1}: overflow at {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # max held | offered         | the offer that overflows (0: none)
          2          | 3 4             | 0
          2          | 3 4 5           | 3
          2          | 3 4 1 2 5 6 7   | 0
          2          | 3 4 5r          | 3
          1          | 1 2 3           | 0
          """)
  void holdingMoreThanTheBoundIsAnOverflow(int max, String offered, int overflowAt) {
    EventOrder order = new EventOrder(0, max);
    String[] words = offered.trim().split(" +");
    int at = 0;
    for (int i = 0; i < words.length && at == 0; i++) {
      if (order.offer(entry(words[i])).overflow()) {
        at = i + 1;
      }
    }
    assertEquals(overflowAt, at);
  }

  @ParameterizedTest
  @CsvSource({"-1, 10", "0, 0"})
  void refusesANegativeStartOrAnEmptyBound(long after, int max) {
    assertThrows(IllegalArgumentException.class, () -> new EventOrder(after, max));
  }

  static TaskEntry entry(String word) {
    boolean report = word.endsWith("r");
    long id = Long.parseLong(report ? word.substring(0, word.length() - 1) : word);
    return new TaskEntry(
        id, report ? "report" : "text", JsonNodeFactory.instance.objectNode().put("i", id));
  }
}
