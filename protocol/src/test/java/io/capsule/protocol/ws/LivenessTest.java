package io.capsule.protocol.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.protocol.ws.Liveness.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Liveness}'s rules as a table: each row is a ping interval, a silence limit and a script of
 * intervals ({@code .} nothing heard, {@code h} something heard before the tick), with the verdict
 * expected at each tick.
 */
class LivenessTest {

  @ParameterizedTest(name = "{0} ms / {1} ms: {2} -> {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # interval | limit | script  | verdicts
          1000       | 3000  | ...     | PING PING DEAD
          1000       | 3000  | h...    | ALIVE PING PING DEAD
          1000       | 3000  | ..h...  | PING PING ALIVE PING PING DEAD
          1000       | 3000  | hhhh    | ALIVE ALIVE ALIVE ALIVE
          1000       | 3000  | .h.h.h  | PING ALIVE PING ALIVE PING ALIVE
          1000       | 2500  | ...     | PING PING DEAD
          1000       | 2000  | ..      | PING DEAD
          500        | 3000  | ......  | PING PING PING PING PING DEAD
          1000       | 1001  | ..      | PING DEAD
          """)
  void decidesAtEachTickFromWhatWasHeard(
      long interval, long limit, String script, String verdicts) {
    Liveness l = new Liveness(Duration.ofMillis(interval), Duration.ofMillis(limit));
    List<Verdict> seen = new ArrayList<>();
    for (char c : script.toCharArray()) {
      if (c == 'h') {
        l.heard();
      }
      seen.add(l.tick());
    }
    assertEquals(Arrays.stream(verdicts.split(" ")).map(Verdict::valueOf).toList(), seen);
  }

  @ParameterizedTest(name = "{0} ms / {1} ms is refused")
  @CsvSource({"1000, 1000", "1000, 500", "0, 1000", "-1, 1000"})
  void refusesALimitNotLongerThanTheInterval(long interval, long limit) {
    assertThrows(
        IllegalArgumentException.class,
        () -> new Liveness(Duration.ofMillis(interval), Duration.ofMillis(limit)));
  }
}
