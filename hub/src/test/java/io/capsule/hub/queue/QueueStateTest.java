package io.capsule.hub.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The queue entity's state folded from its events, and the short history it is read back as: a row
 * is a sequence of events ({@code q:t1} queued, {@code p:} placed, {@code c:} canceled, {@code f:}
 * forgotten) and the state as {@code waiting / canceled / forgotten}.
 */
class QueueStateTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # events                      | waiting / canceled / forgotten
          q:t1 q:t2                     | t1 t2 / - / -
          q:t1 q:t1                     | t1 / - / -
          q:t1 q:t2 p:t1                | t2 / - / -
          q:t1 c:t1                     | - / t1 / -
          c:t1                          | - / - / -
          q:t1 c:t1 f:t1                | - / - / t1
          q:t1 p:t1 f:t1                | - / - / t1
          f:t9 f:t9                     | - / - / t9
          q:t1 q:t2 q:t3 c:t2 p:t1 f:t7 | t3 / t2 / t7
          """)
  void foldsEventsAndReadsBackAsTheShortestHistoryWithTheSameMeaning(
      String events, String expected) {
    QueueState state = QueueState.EMPTY;
    for (String e : events.trim().split(" +")) {
      state = state.apply(event(e));
    }
    assertEquals(expected.trim(), show(state));
    QueueState again = QueueState.EMPTY;
    for (QueueEvent e : state.asEvents()) {
      again = again.apply(e);
    }
    assertEquals(state, again, "asEvents rebuilds the same state");
  }

  private static QueueEvent event(String word) {
    String id = word.substring(2);
    return switch (word.charAt(0)) {
      case 'q' -> QueueEvent.queued(id, "alpha", "", "agent", "{}", "{}");
      case 'p' -> QueueEvent.left(QueueEvent.Kind.PLACED, id);
      case 'c' -> QueueEvent.left(QueueEvent.Kind.CANCELED, id);
      case 'f' -> QueueEvent.left(QueueEvent.Kind.FORGOTTEN, id);
      default -> throw new IllegalArgumentException(word);
    };
  }

  private static String show(QueueState s) {
    return ids(s.waiting().stream().map(QueueEvent::taskId).toList())
        + " / "
        + ids(s.canceled().stream().map(QueueEvent::taskId).toList())
        + " / "
        + ids(s.forgotten());
  }

  private static String ids(List<String> ids) {
    return ids.isEmpty() ? "-" : String.join(" ", ids);
  }
}
