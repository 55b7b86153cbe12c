package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** An ack never covers an applied frame the store has not kept yet. */
class DurableAcksTest {

  /**
   * Steps: {@code s:T:n:below} sent n frames of T above the kept seq {@code below}; {@code
   * k:T:n:seq} kept n frames up to seq; {@code kr:…} the same with the report. {@code sequenced} is
   * what the sequencing would ack ({@code T=5,U=2}); {@code ack} what goes out.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          nothing in flight: as sequenced        | -                      | T=5,U=2 | T=5,U=2
          in flight: lowered to what was kept    | s:T:2:3                | T=5     | T=3
          in flight from the start: left out     | s:T:5:0                | T=5     | ''
          partly kept: lowered to that           | s:T:2:3 k:T:1:4        | T=5     | T=4
          all kept: as sequenced again           | s:T:2:3 k:T:2:5        | T=5     | T=5
          other tasks are not held back          | s:T:2:3                | T=5,U=2 | T=3,U=2
          later sends keep the first floor       | s:T:1:3 s:T:1:4        | T=5     | T=3
          a kept report is owed                  | s:T:1:4 kr:T:1:5       | -       | T=5
          """)
  void acksOnlyWhatIsKept(String why, String steps, String sequenced, String ack) {
    DurableAcks a = new DurableAcks();
    if (!steps.equals("-")) {
      for (String step : steps.split(" ")) {
        String[] p = step.split(":");
        int n = Integer.parseInt(p[2]);
        long seq = Long.parseLong(p[3]);
        switch (p[0]) {
          case "s" -> a.sent(p[1], n, seq);
          case "k" -> a.kept(p[1], n, seq, false);
          case "kr" -> a.kept(p[1], n, seq, true);
          default -> throw new IllegalArgumentException(step);
        }
      }
    }
    assertEquals(parse(ack), a.body(parse(sequenced)), why);
  }

  @Test
  void anOwedReportIsAckedOnce() {
    DurableAcks a = new DurableAcks();
    a.sent("T", 1, 4);
    assertEquals(Map.of("T", 4L), a.body(Map.of("T", 5L)), "the report is not kept yet");
    a.kept("T", 1, 5, true);
    assertEquals(Map.of("T", 5L), a.body(Map.of()));
    assertEquals(Map.of(), a.body(Map.of()));
    assertEquals(0, a.inFlight());
  }

  @Test
  void keepingMoreThanWasSentIsAnError() {
    DurableAcks a = new DurableAcks();
    a.sent("T", 1, 0);
    assertThrows(IllegalStateException.class, () -> a.kept("T", 2, 2, false));
  }

  private static Map<String, Long> parse(String s) {
    Map<String, Long> out = new LinkedHashMap<>();
    if (s.isEmpty() || s.equals("-")) {
      return out;
    }
    for (String kv : s.split(",")) {
      String[] p = kv.split("=");
      out.put(p[0], Long.parseLong(p[1]));
    }
    return out;
  }
}
