package io.capsule.hub.task;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.hub.store.HubJournal.Direction;
import java.io.NotSerializableException;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.apache.pekko.serialization.jackson.JacksonCborSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A task event's journal format, through the actor system's own serialization (what the JDBC
 * journal calls): a new row round-trips through {@link TaskEventSerializer}, and a row an earlier
 * hub wrote as CBOR is still read by the serializer its row names.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TaskEventSerializerTest {
  private final ActorTestKit kit = ActorTestKit.create();
  private final Serialization ser = SerializationExtension.get(kit.system().classicSystem());

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  private static TaskEvent event() {
    return new TaskEvent(
        "proj-é",
        "runner-1",
        Direction.APPLIED,
        "task.progress",
        Long.MAX_VALUE - 7,
        "{\"type\":\"task.progress\",\"text\":\"ünïcode ✓ " + "x".repeat(70_000) + "\"}");
  }

  @Test
  void aTaskEventIsWrittenInItsOwnFormatAndReadBack() {
    TaskEvent e = event();
    Serializer s = ser.findSerializerFor(e);
    assertEquals(TaskEventSerializer.ID, s.identifier(), "bound to its own serializer");
    byte[] bytes = ser.serialize(e).get();
    Object back = ser.deserialize(bytes, s.identifier(), Serializers.manifestFor(s, e)).get();
    assertEquals(e, back);
    TaskEvent sent =
        new TaskEvent("p", "r", Direction.SENT, "task.assign", 1, "{\"type\":\"task.assign\"}");
    assertEquals(
        sent,
        ser.deserialize(ser.serialize(sent).get(), s.identifier(), Serializers.manifestFor(s, sent))
            .get());
  }

  @ParameterizedTest(name = "project {0}, runner {1}")
  @CsvSource({"p-1, r-1", "prøject, r-1", "p-1, rünner", "'', ''"})
  void aRowIsTheSameBytesAsTheFormatsStreamWritesWhateverItsIds(String project, String runner)
      throws Exception {
    TaskEvent e =
        new TaskEvent(project, runner, Direction.APPLIED, "task.progress", 42, "{\"a\":1}");
    java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(expected)) {
      out.writeUTF(project);
      out.writeUTF(runner);
      out.writeByte(Direction.APPLIED.ordinal());
      out.writeUTF("task.progress");
      out.writeLong(42);
      out.write("{\"a\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    byte[] bytes = ser.serialize(e).get();
    org.junit.jupiter.api.Assertions.assertArrayEquals(expected.toByteArray(), bytes);
    Serializer s = ser.findSerializerFor(e);
    assertEquals(e, ser.deserialize(bytes, s.identifier(), Serializers.manifestFor(s, e)).get());
  }

  @Test
  void aRowWrittenAsCborBeforeThisFormatIsStillRead() {
    TaskEvent e = event();
    // The serializer every other HubCbor class still uses: the one that wrote TaskEvents before.
    Serializer cbor = ser.findSerializerFor(TaskLedger.EMPTY);
    assertInstanceOf(JacksonCborSerializer.class, cbor);
    byte[] old = cbor.toBinary(e);
    Object back = ser.deserialize(old, cbor.identifier(), Serializers.manifestFor(cbor, e)).get();
    assertEquals(e, back, "the row's serializer id picks CBOR");
  }

  @Test
  void aDamagedOrUnknownRowIsRefusedNotMisread() throws Exception {
    TaskEventSerializer s = new TaskEventSerializer(null);
    byte[] bytes = s.toBinary(event());
    assertThrows(NotSerializableException.class, () -> s.fromBinary(bytes, "TaskEvent.2"));
    byte[] cut = Arrays.copyOf(bytes, 5);
    assertInstanceOf(
        NotSerializableException.class,
        assertThrows(Exception.class, () -> s.fromBinary(cut, TaskEventSerializer.MANIFEST)));
    assertArrayEquals(bytes, s.toBinary(s.fromBinary(bytes, TaskEventSerializer.MANIFEST)));
  }

  @Test
  void aRowOfSeveralFramesIsWrittenInItsOwnFormatAndReadBack() {
    TaskEvents row =
        new TaskEvents(
            List.of(
                event(),
                new TaskEvent("p", "r", Direction.APPLIED, "task.progress", 2, "{\"a\":1}"),
                new TaskEvent("prøject", "r", Direction.APPLIED, "task.report", 3, "{}")));
    Serializer s = ser.findSerializerFor(row);
    assertEquals(TaskEventSerializer.ID, s.identifier(), "bound to the same serializer");
    assertEquals(TaskEventSerializer.MANIFEST_ROWS, Serializers.manifestFor(s, row));
    Object back = ser.deserialize(ser.serialize(row).get(), s.identifier(), "TaskEvents.1").get();
    assertEquals(row, back);
  }

  @Test
  void aDamagedRowOfSeveralFramesIsRefusedNotMisread() throws Exception {
    TaskEventSerializer s = new TaskEventSerializer(null);
    TaskEvent e = new TaskEvent("p", "r", Direction.APPLIED, "task.progress", 2, "{\"a\":1}");
    byte[] bytes = s.toBinary(new TaskEvents(List.of(e, e)));
    String rows = TaskEventSerializer.MANIFEST_ROWS;
    for (int cut : new int[] {0, 3, 7, bytes.length - 1}) {
      byte[] shorter = Arrays.copyOf(bytes, cut);
      assertThrows(NotSerializableException.class, () -> s.fromBinary(shorter, rows), "cut " + cut);
    }
    byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
    assertThrows(NotSerializableException.class, () -> s.fromBinary(longer, rows));
    byte[] claims = bytes.clone();
    claims[3] = 100; // a hundred frames in a row that holds two
    assertThrows(NotSerializableException.class, () -> s.fromBinary(claims, rows));
    assertArrayEquals(bytes, s.toBinary(s.fromBinary(bytes, rows)));
  }
}
