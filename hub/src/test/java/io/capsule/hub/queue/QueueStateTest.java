package io.capsule.hub.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.cbor.databind.CBORMapper;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.SerializerWithStringManifest;
import org.junit.jupiter.api.Test;
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
          # events                      | waiting / canceled / forgotten / cancel requested
          q:t1 q:t2                     | t1 t2 / - / - / -
          q:t1 q:t1                     | t1 / - / - / -
          q:t1 q:t2 p:t1                | t2 / - / - / -
          q:t1 c:t1                     | - / t1 / - / -
          c:t1                          | - / - / - / -
          q:t1 c:t1 f:t1                | - / - / t1 / -
          q:t1 p:t1 f:t1                | - / - / t1 / -
          f:t9 f:t9                     | - / - / t9 / -
          q:t1 q:t2 q:t3 c:t2 p:t1 f:t7 | t3 / t2 / t7 / -
          r:t1 r:t1                     | - / - / - / t1
          q:t2 r:t1 r:t3 p:t2           | - / - / - / t1 t3
          r:t1 f:t1 r:t1                | - / - / t1 / -
          q:t1 c:t1 r:t1 r:t2 f:t2      | - / t1 / t2 / t1
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

  @Test
  void aSnapshotWrittenBeforeCancelRequestedExistedReadsBackWithNone() throws Exception {
    ActorTestKit kit = ActorTestKit.create();
    try {
      SerializerWithStringManifest cbor =
          (SerializerWithStringManifest)
              SerializationExtension.get(Adapter.toClassic(kit.system()))
                  .findSerializerFor(QueueState.EMPTY);
      QueueState now =
          QueueState.EMPTY.apply(event("q:t1")).apply(event("f:t9")).apply(event("r:t2"));
      // The previous code's snapshot: the same record as the serializer writes it, without the
      // component added after it.
      CBORMapper mapper = new CBORMapper();
      ObjectNode tree = (ObjectNode) mapper.readTree(cbor.toBinary(now));
      assertTrue(tree.has("cancelRequested"), tree.toString());
      tree.remove("cancelRequested");
      QueueState old =
          (QueueState) cbor.fromBinary(mapper.writeValueAsBytes(tree), cbor.manifest(now));
      assertEquals("t1 / - / t9 / -", show(old));
    } finally {
      kit.shutdownTestKit();
    }
  }

  private static QueueEvent event(String word) {
    String id = word.substring(2);
    return switch (word.charAt(0)) {
      case 'q' -> QueueEvent.queued(id, "alpha", "", "agent", "{}", "{}");
      case 'p' -> QueueEvent.left(QueueEvent.Kind.PLACED, id);
      case 'c' -> QueueEvent.left(QueueEvent.Kind.CANCELED, id);
      case 'f' -> QueueEvent.left(QueueEvent.Kind.FORGOTTEN, id);
      case 'r' -> QueueEvent.left(QueueEvent.Kind.CANCEL_REQUESTED, id);
      default -> throw new IllegalArgumentException(word);
    };
  }

  private static String show(QueueState s) {
    return ids(s.waiting().stream().map(QueueEvent::taskId).toList())
        + " / "
        + ids(s.canceled().stream().map(QueueEvent::taskId).toList())
        + " / "
        + ids(s.forgotten())
        + " / "
        + ids(s.cancelRequested());
  }

  private static String ids(List<String> ids) {
    return ids.isEmpty() ? "-" : String.join(" ", ids);
  }
}
