package io.capsule.hub.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Wire ids of a task's attempts as a table: both ways, and which submitted ids are refused. */
class AttemptTest {

  @ParameterizedTest(name = "[{index}] {0} is attempt {2} of {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # wire id                 | task            | attempt | next
          t-1                       | t-1             | 1       | t-1~attempt-2
          t-1~attempt-2             | t-1             | 2       | t-1~attempt-3
          t-1~attempt-10            | t-1             | 10      | t-1~attempt-11
          a~attempt-2~attempt-3     | a~attempt-2     | 3       | a~attempt-2~attempt-4
          t-1~attempt-1             | t-1~attempt-1   | 1       | t-1~attempt-1~attempt-2
          t-1~attempt-02            | t-1~attempt-02  | 1       | t-1~attempt-02~attempt-2
          t-1~attempt-              | t-1~attempt-    | 1       | t-1~attempt-~attempt-2
          t-1~attempt-2x            | t-1~attempt-2x  | 1       | t-1~attempt-2x~attempt-2
          ~attempt-2                | ~attempt-2      | 1       | ~attempt-2~attempt-2
          """)
  void aWireIdNamesItsTaskAndAttempt(String wire, String task, int attempt, String next) {
    assertEquals(task, Attempt.taskOf(wire));
    assertEquals(attempt, Attempt.numberOf(wire));
    assertEquals(next, Attempt.next(wire));
    assertEquals(wire, Attempt.wireId(task, attempt));
  }

  @ParameterizedTest(name = "[{index}] {0} reserved: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          t-1                 | false
          t-1~attempt         | false
          t-1~attempt-        | false
          t-1~attempt-x       | false
          t-1~attempt-2-b     | false
          t-1~attempt-2       | true
          t-1~attempt-1       | true
          t-1~attempt-02      | true
          ~attempt-7          | true
          """)
  void aSubmittedIdEndingLikeAWireIdIsReserved(String id, boolean reserved) {
    assertEquals(reserved, Attempt.isReserved(id));
    if (!reserved) {
      assertEquals(id, Attempt.taskOf(id)); // a submitted id always stands for itself
    }
  }

  @ParameterizedTest
  @CsvSource({"0", "-1"})
  void attemptsCountFromOne(int n) {
    assertThrows(IllegalArgumentException.class, () -> Attempt.wireId("t-1", n));
  }

  @ParameterizedTest
  @CsvSource({"t-1", "a~attempt-x", "x"})
  void theLongestWireIdIsAnAttemptOfItsTaskAndNoLongerOneIs(String task) {
    String longest = Attempt.longest(task);
    assertEquals(task, Attempt.taskOf(longest));
    assertEquals(999_999_999, Attempt.numberOf(longest));
    String beyond = task + Attempt.MARK + "1000000000"; // ten digits: not read as an attempt
    assertEquals(beyond, Attempt.taskOf(beyond));
  }
}
