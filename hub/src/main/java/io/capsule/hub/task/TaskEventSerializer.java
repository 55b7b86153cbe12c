package io.capsule.hub.task;

import io.capsule.hub.store.HubJournal.Direction;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * The store's format of a {@link TaskEvent}, one per journal row: five short fields, then the
 * frame's JSON as UTF-8 to the end. Every frame the hub persists goes through here, so it is plain
 * byte copying: the generic CBOR serializer spent ~5 % of the hub's CPU in {@code PersistBench}
 * (benchmarks/README.md) encoding a ~600-character string field by field.
 *
 * <p>Rows written before this format (CBOR, the {@code jackson-cbor} serializer's id in the row)
 * are still read by that serializer: a row names the serializer that wrote it. A hub older than
 * this format cannot read rows written in it.
 */
public final class TaskEventSerializer extends SerializerWithStringManifest {
  /** In the journal's {@code event_ser_id} column: never change it once rows carry it. */
  public static final int ID = 1_212_001;

  static final String MANIFEST = "TaskEvent.1";

  public TaskEventSerializer(ExtendedActorSystem system) {}

  @Override
  public int identifier() {
    return ID;
  }

  @Override
  public String manifest(Object o) {
    return MANIFEST;
  }

  @Override
  public byte[] toBinary(Object o) {
    if (!(o instanceof TaskEvent e)) {
      throw new IllegalArgumentException("not a TaskEvent: " + o.getClass().getName());
    }
    byte[] frame = e.frame().getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(frame.length + 96);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeUTF(e.projectId());
      out.writeUTF(e.runnerId());
      out.writeByte(e.direction().ordinal());
      out.writeUTF(e.type());
      out.writeLong(e.seq());
      out.write(frame);
    } catch (IOException ex) {
      throw new UncheckedIOException(ex); // a ByteArrayOutputStream does not fail
    }
    return bytes.toByteArray();
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    if (!MANIFEST.equals(manifest)) {
      throw new NotSerializableException(
          "unknown TaskEvent format '" + manifest + "' (a newer hub wrote it?)");
    }
    ByteArrayInputStream in = new ByteArrayInputStream(bytes);
    try (DataInputStream data = new DataInputStream(in)) {
      String projectId = data.readUTF();
      String runnerId = data.readUTF();
      Direction direction = Direction.values()[data.readUnsignedByte()];
      String type = data.readUTF();
      long seq = data.readLong();
      String frame = new String(data.readAllBytes(), StandardCharsets.UTF_8);
      return new TaskEvent(projectId, runnerId, direction, type, seq, frame);
    } catch (IOException | ArrayIndexOutOfBoundsException ex) {
      NotSerializableException e =
          new NotSerializableException("a TaskEvent row is damaged: " + ex.getMessage());
      e.initCause(ex);
      throw e;
    }
  }
}
