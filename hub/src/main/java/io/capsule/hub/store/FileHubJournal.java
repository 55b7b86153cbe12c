package io.capsule.hub.store;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A {@link HubJournal} in a directory: {@code hub.journal}, one JSON object per line ({@code
 * {"v":1,"project":…,"runner":…,"dir":"sent"|"applied","frame":{…}}}, the frame exactly as on the
 * wire), and {@code hub.lock}, held while the journal is open so two hubs never write one file.
 *
 * <p>Durability: each entry is written with one {@code write} before {@link #append} returns, so a
 * killed hub process loses nothing it acted on (the kernel keeps what was written). Surviving a
 * machine crash as well needs {@code fsync} per entry: pass {@code sync = true} (slower: a disk
 * flush per frame). A hub killed in the middle of a write leaves at most one torn last line, which
 * {@link #open} drops (nothing acted on it: the hub acts only after {@code append} returns) and
 * reports in {@link #droppedTornBytes()}; any other unreadable line refuses the journal with {@code
 * E-PRO-010} and its line number, because skipping it could apply a frame twice.
 *
 * <p>The journal grows with the hub's history (a reference hub keeps every task's events anyway);
 * start with a fresh directory to forget.
 */
public final class FileHubJournal implements HubJournal {
  static final String FILE = "hub.journal";
  static final String LOCK = "hub.lock";

  private static final FrameCodec CODEC = FrameCodec.shared();

  private final Path file;
  private final boolean sync;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final FileChannel channel;
  private final List<Entry> recorded;
  private final long droppedTornBytes;
  private boolean broken;
  private boolean closed;

  private FileHubJournal(
      Path file,
      boolean sync,
      FileChannel lockChannel,
      FileLock lock,
      FileChannel channel,
      List<Entry> recorded,
      long droppedTornBytes) {
    this.file = file;
    this.sync = sync;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.channel = channel;
    this.recorded = recorded;
    this.droppedTornBytes = droppedTornBytes;
  }

  /**
   * Opens (creating when absent) the journal in {@code dir} and reads what it holds.
   *
   * @throws ProtocolException {@code E-PRO-010} when the directory cannot be used, another hub
   *     holds it, or a recorded line is unreadable
   */
  public static FileHubJournal open(Path dir, boolean sync) {
    FileChannel lockChannel = null;
    try {
      Files.createDirectories(dir);
      lockChannel =
          FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = tryLock(lockChannel, dir);
      Path file = dir.resolve(FILE);
      byte[] bytes = Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
      int end = lastNewline(bytes) + 1; // bytes after it are a torn write
      List<Entry> recorded = parse(file, bytes, end);
      FileChannel channel =
          FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      channel.truncate(end);
      channel.position(end);
      if (sync) {
        channel.force(true);
      }
      return new FileHubJournal(
          file, sync, lockChannel, lock, channel, recorded, bytes.length - (long) end);
    } catch (IOException e) {
      closeQuietly(lockChannel);
      throw failure("cannot open the hub journal in " + dir + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      closeQuietly(lockChannel); // releases the lock too
      throw e;
    }
  }

  @Override
  public List<Entry> recorded() {
    return recorded;
  }

  /** Bytes of a torn last line {@link #open} dropped (0 when the journal ended cleanly). */
  public long droppedTornBytes() {
    return droppedTornBytes;
  }

  public Path file() {
    return file;
  }

  @Override
  public synchronized void append(Entry entry) {
    if (closed || broken) {
      throw failure(
          "the hub journal " + file + " is " + (closed ? "closed" : "broken by an earlier failure"),
          null);
    }
    ByteBuffer line = ByteBuffer.wrap(encode(entry));
    try {
      while (line.hasRemaining()) {
        channel.write(line);
      }
      if (sync) {
        channel.force(false);
      }
    } catch (IOException e) {
      // A partial line may now end the file; appending after it would glue two entries into one
      // unreadable line in the middle, so this journal takes no more entries.
      broken = true;
      throw failure("cannot write the hub journal " + file + ": " + e.getMessage(), e);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeQuietly(channel);
    try {
      lock.release();
    } catch (IOException e) {
      // the channel's close below releases it too
    }
    closeQuietly(lockChannel);
  }

  static byte[] encode(Entry entry) {
    ByteArrayBuilder out = new ByteArrayBuilder(256);
    try (JsonGenerator g = CODEC.mapper().getFactory().createGenerator(out, JsonEncoding.UTF8)) {
      g.writeStartObject();
      g.writeNumberField("v", 1);
      g.writeStringField("project", entry.runner().projectId());
      g.writeStringField("runner", entry.runner().runnerId());
      g.writeStringField("dir", entry.direction().name().toLowerCase(Locale.ROOT));
      g.writeFieldName("frame");
      g.writeRawValue(CODEC.encodeToString(entry.frame()));
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("encoding to memory cannot fail", e);
    }
    out.write('\n');
    return out.toByteArray();
  }

  private static List<Entry> parse(Path file, byte[] bytes, int end) {
    List<Entry> entries = new ArrayList<>();
    int start = 0;
    int lineNo = 0;
    while (start < end) {
      int nl = start;
      while (bytes[nl] != '\n') {
        nl++;
      }
      lineNo++;
      if (nl > start) {
        entries.add(decode(file, lineNo, bytes, start, nl - start));
      }
      start = nl + 1;
    }
    return entries;
  }

  private static Entry decode(Path file, int lineNo, byte[] bytes, int offset, int length) {
    try {
      JsonNode n = CODEC.mapper().readTree(bytes, offset, length);
      if (n == null || !n.isObject() || n.path("v").asInt() != 1) {
        throw new IllegalArgumentException("not a version 1 journal entry");
      }
      RunnerKey runner =
          new RunnerKey(text(n, "project"), text(n, "runner")); // both required, never blank
      Direction dir = Direction.valueOf(text(n, "dir").toUpperCase(Locale.ROOT));
      Frame frame = CODEC.decode(n.get("frame"), false);
      boolean fits =
          dir == Direction.SENT
              ? frame instanceof TaskAssign || frame instanceof TaskCancel
              : frame instanceof TaskProgress || frame instanceof TaskReport;
      if (!fits) {
        throw new IllegalArgumentException("a '" + frame.type() + "' frame cannot be " + dir);
      }
      return new Entry(runner, dir, (SequencedFrame) frame);
    } catch (IOException | RuntimeException e) {
      throw failure(
          file + " line " + lineNo + " is unreadable (" + e.getMessage() + ")",
          e,
          "restore the file from a backup, or start the hub on a fresh --state-dir (its tasks are"
              + " then forgotten)");
    }
  }

  private static String text(JsonNode n, String key) {
    JsonNode v = n.get(key);
    if (v == null || !v.isTextual() || v.textValue().isEmpty()) {
      throw new IllegalArgumentException("'" + key + "' must be a non-empty string");
    }
    return v.textValue();
  }

  private static FileLock tryLock(FileChannel channel, Path dir) throws IOException {
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null; // held by this JVM
    }
    if (lock == null) {
      throw failure(
          dir + " is in use by another hub",
          null,
          "stop the other hub, or give this one its own --state-dir");
    }
    return lock;
  }

  private static int lastNewline(byte[] bytes) {
    for (int i = bytes.length - 1; i >= 0; i--) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static ProtocolException failure(String message, Throwable cause) {
    return failure(message, cause, null);
  }

  private static ProtocolException failure(String message, Throwable cause, String hint) {
    Diagnostic d = Diagnostic.of(Code.E_PRO_010, message);
    if (hint != null) {
      d = d.withHint(hint);
    }
    return cause == null ? new ProtocolException(d) : new ProtocolException(d, cause);
  }

  private static void closeQuietly(FileChannel c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (IOException e) {
      // nothing left to do: the process keeps running without this file
    }
  }
}
