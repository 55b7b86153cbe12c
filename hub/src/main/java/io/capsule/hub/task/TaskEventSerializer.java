package io.capsule.hub.task;

import io.capsule.hub.store.HubJournal.Direction;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * The store's format of a task's journal rows ({@link TaskRow}). A {@link TaskEvent} ({@value
 * #MANIFEST}): five short fields, then the frame's JSON as UTF-8 to the end. A {@link TaskEvents}
 * ({@value #MANIFEST_ROWS}): the count of its frames, then each frame's length and its bytes in the
 * first format. Every frame the hub persists goes through here, so it is plain byte copying: the
 * generic CBOR serializer spent ~5 % of the hub's CPU in {@code PersistBench}
 * (benchmarks/README.md) encoding a ~600-character string field by field.
 *
 * <p>Rows written before this format (CBOR, the {@code jackson-cbor} serializer's id in the row)
 * are still read by that serializer: a row names the serializer that wrote it. A hub older than
 * this format cannot read rows written in it, and one older than {@link TaskEvents} cannot read
 * those: it refuses them by their manifest rather than misread them.
 */
public final class TaskEventSerializer extends SerializerWithStringManifest {
  /** In the journal's {@code event_ser_id} column: never change it once rows carry it. */
  public static final int ID = 1_212_001;

  static final String MANIFEST = "TaskEvent.1";

  static final String MANIFEST_ROWS = "TaskEvents.1";

  public TaskEventSerializer(ExtendedActorSystem system) {}

  @Override
  public int identifier() {
    return ID;
  }

  @Override
  public String manifest(Object o) {
    return o instanceof TaskEvents ? MANIFEST_ROWS : MANIFEST;
  }

  @Override
  public byte[] toBinary(Object o) {
    if (o instanceof TaskEvent e) {
      return bytes(e);
    }
    if (!(o instanceof TaskEvents row)) {
      throw new IllegalArgumentException("not a TaskRow: " + o.getClass().getName());
    }
    // Each frame's UTF-8 made once and copied once, into one array of the row's size.
    List<TaskEvent> events = row.events();
    byte[][] frames = new byte[events.size()][];
    int size = 4;
    for (int i = 0; i < frames.length; i++) {
      TaskEvent e = events.get(i);
      frames[i] = e.frame().getBytes(StandardCharsets.UTF_8);
      int plain = plainSize(e, frames[i]);
      if (plain < 0) {
        frames[i] = bytes(e); // ids a plain header cannot hold: the stream's encoding, whole
      }
      size += 4 + (plain < 0 ? frames[i].length : plain);
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putInt(frames.length);
    for (int i = 0; i < frames.length; i++) {
      TaskEvent e = events.get(i);
      int plain = plainSize(e, frames[i]);
      if (plain < 0) {
        out.putInt(frames[i].length);
        out.put(frames[i]);
      } else {
        out.putInt(plain);
        plainInto(out, e, frames[i]);
      }
    }
    return out.array();
  }

  /** The size of {@code e} in the plain encoding, or -1 when one of its ids is not plain. */
  private static int plainSize(TaskEvent e, byte[] frame) {
    if (!(plain(e.projectId()) && plain(e.runnerId()) && plain(e.type()))) {
      return -1;
    }
    return 2
        + e.projectId().length()
        + 2
        + e.runnerId().length()
        + 1
        + 2
        + e.type().length()
        + 8
        + frame.length;
  }

  /**
   * The usual row: ids of ASCII without NUL, the same bytes as writeUTF's in {@link #bytes} (such
   * ASCII is its own modified UTF-8), written straight into {@code out}.
   */
  private static void plainInto(ByteBuffer out, TaskEvent e, byte[] frame) {
    ascii(out, e.projectId());
    ascii(out, e.runnerId());
    out.put((byte) e.direction().ordinal());
    ascii(out, e.type());
    out.putLong(e.seq());
    out.put(frame);
  }

  private static byte[] bytes(TaskEvent e) {
    byte[] frame = e.frame().getBytes(StandardCharsets.UTF_8);
    int plain = plainSize(e, frame);
    if (plain >= 0) {
      // Its size known up front, written into one array of that size (no stream buffer to grow
      // and copy out).
      ByteBuffer out = ByteBuffer.allocate(plain);
      plainInto(out, e, frame);
      return out.array();
    }
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

  /** ASCII without NUL, short enough for writeUTF: written as is. */
  private static boolean plain(String s) {
    if (s.length() > 0xFFFF) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0 || c > 0x7F) {
        return false;
      }
    }
    return true;
  }

  /** As {@link DataOutputStream#writeUTF} for a {@link #plain} string. */
  private static void ascii(ByteBuffer out, String s) {
    out.putShort((short) s.length());
    for (int i = 0; i < s.length(); i++) {
      out.put((byte) s.charAt(i));
    }
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    if (MANIFEST.equals(manifest)) {
      return event(bytes, 0, bytes.length);
    }
    if (!MANIFEST_ROWS.equals(manifest)) {
      throw new NotSerializableException(
          "unknown task row format '" + manifest + "' (a newer hub wrote it?)");
    }
    try {
      ByteBuffer in = ByteBuffer.wrap(bytes);
      int count = in.getInt();
      if (count < 2 || count > in.remaining() / 4) {
        throw damaged("it claims " + count + " frames in " + bytes.length + " bytes", null);
      }
      List<TaskEvent> events = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
          throw damaged("frame " + (i + 1) + " of " + count + " is cut", null);
        }
        events.add(event(bytes, in.position(), length));
        in.position(in.position() + length);
      }
      if (in.hasRemaining()) {
        throw damaged(in.remaining() + " bytes follow its last frame", null);
      }
      return new TaskEvents(events);
    } catch (java.nio.BufferUnderflowException ex) {
      throw damaged("it is cut", ex);
    }
  }

  private static TaskEvent event(byte[] bytes, int offset, int length)
      throws NotSerializableException {
    try (DataInputStream data =
        new DataInputStream(new ByteArrayInputStream(bytes, offset, length))) {
      String projectId = data.readUTF();
      String runnerId = data.readUTF();
      Direction direction = Direction.values()[data.readUnsignedByte()];
      String type = data.readUTF();
      long seq = data.readLong();
      String frame = new String(data.readAllBytes(), StandardCharsets.UTF_8);
      return new TaskEvent(projectId, runnerId, direction, type, seq, frame);
    } catch (IOException | ArrayIndexOutOfBoundsException ex) {
      throw damaged(ex.getMessage(), ex);
    }
  }

  private static NotSerializableException damaged(String why, Throwable cause) {
    NotSerializableException e = new NotSerializableException("a task row is damaged: " + why);
    if (cause != null) {
      e.initCause(cause);
    }
    return e;
  }
}
