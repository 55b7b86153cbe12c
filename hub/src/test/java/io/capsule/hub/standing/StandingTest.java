package io.capsule.hub.standing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.hub.standing.Standing.Facts;
import io.capsule.hub.standing.Standing.Self;
import io.capsule.hub.standing.Standing.Verdict;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link Standing}'s rules, one row per case, in the order of its Javadoc. */
class StandingTest {

  @ParameterizedTest(name = "{0}, {1} others, {2} silent -> {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # self     | others | silent | verdict
          NO_CLUSTER | 0      | 0      | SERVING
          GONE       | 2      | 0      | CUT_OFF
          GONE       | 0      | 0      | CUT_OFF
          JOINING    | 2      | 2      | JOINING
          UP         | 0      | 0      | SERVING
          UP         | 2      | 0      | SERVING
          UP         | 2      | 1      | SERVING
          UP         | 2      | 2      | CUT_OFF
          UP         | 1      | 0      | SERVING
          UP         | 1      | 1      | CUT_OFF
          UP         | 3      | 1      | SERVING
          UP         | 3      | 2      | CUT_OFF
          UP         | 4      | 2      | SERVING
          UP         | 4      | 3      | CUT_OFF
          """)
  void decidesFromTheNodesOwnView(Self self, int others, int silent, Verdict verdict) {
    assertEquals(verdict, Standing.decide(new Facts(self, others, silent)));
  }

  @ParameterizedTest(name = "{0} of {1} silent is refused")
  @CsvSource({"-1, 0", "0, -1", "2, 3"})
  void refusesFactsThatCannotBe(int others, int silent) {
    assertThrows(IllegalArgumentException.class, () -> new Facts(Self.UP, others, silent));
  }
}
