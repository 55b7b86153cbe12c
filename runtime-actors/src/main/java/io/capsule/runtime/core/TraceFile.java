package io.capsule.runtime.core;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A run's {@code trace.jsonl} written off the caller's thread: each record is rendered at once (its
 * timestamp is when it happened) and the line is appended by a task on the given executor, chained
 * so lines keep their order. The first task creates the run directory (mode 0700: the trace names
 * the harness's files and env names) and the file (0600). The first failure (create, open, write)
 * stops the trace and is kept as {@link #failure()}; the run goes on and says so ({@code
 * W-RUN-044}) instead of losing its trace in silence.
 *
 * <p>Lines written while the task before them has not started yet join one queued task instead of
 * each chaining its own: a batch of parsed lines makes many records, and a task per record (a
 * dispatcher hand-off and a thread wake-up each) cost the run more than writing them does.
 *
 * <p>Threading: {@link #write} and {@link #close} are called from one thread (the run's actor); the
 * file is touched only by the chained tasks, one at a time.
 */
public final class TraceFile {

  /** Owner only: a trace and its run directory are the user's, not every local account's. */
  public static final String DIR_MODE = "rwx------";

  public static final String FILE_MODE = "rw-------";

  private final Path dir;
  private final Clock clock;
  private final Executor io;
  private final AtomicReference<String> failure = new AtomicReference<>();
  private CompletableFuture<Void> tail;
  private BufferedWriter out; // touched only by the chained tasks
  private final Object lock = new Object();
  private StringBuilder queued; // lines whose task has not taken them yet; guarded by lock

  /**
   * @param dir the run directory, created with the first task
   * @param io where the file work runs (the blocking dispatcher)
   */
  public TraceFile(Path dir, Clock clock, Executor io) {
    this.dir = dir;
    this.clock = clock;
    this.io = io;
    this.tail = CompletableFuture.runAsync(this::open, io);
  }

  /** The run directory: created with mode 0700 (and any missing parent likewise). */
  public static void createDir(Path dir) throws IOException {
    Files.createDirectories(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(DIR_MODE)));
  }

  public void write(TraceRecord record) {
    StringBuilder line = new StringBuilder(128);
    TraceJson.append(line, record, clock.instant());
    enqueue(line.append('\n'));
  }

  /**
   * The records in order, as {@link #write} of each would: rendered together into one piece and
   * queued as it is, not copied again (a parsed batch's records). A record the renderer cannot
   * write fails as {@link #write} does, after the records before it.
   */
  public void writeAll(List<TraceRecord> records) {
    if (records.isEmpty()) {
      return;
    }
    StringBuilder lines = new StringBuilder(128 * records.size());
    try {
      TraceWriter.renderLines(records, clock, lines);
    } catch (UncheckedIOException e) {
      records.forEach(this::write); // one at a time, so the ones before the bad one are kept
      return;
    }
    enqueue(lines);
  }

  /** Queues {@code lines}, which the caller hands over and never touches again. */
  private void enqueue(StringBuilder lines) {
    synchronized (lock) {
      if (queued != null) {
        queued.append(lines); // a task is chained and has not taken its lines yet
        return;
      }
      queued = lines;
    }
    tail = tail.thenRunAsync(this::appendQueued, io);
  }

  /** Why the trace stopped, once a task failed (read it after {@link #close()} completed). */
  public Optional<String> failure() {
    return Optional.ofNullable(failure.get());
  }

  /** Flushes and closes after every line written so far; completes when the file is complete. */
  public CompletableFuture<Void> close() {
    tail = tail.thenRunAsync(this::shut, io);
    return tail;
  }

  private void open() {
    try {
      createDir(dir);
      Path file = dir.resolve("trace.jsonl");
      if (!Files.exists(file)) {
        Files.createFile(
            file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(FILE_MODE)));
      }
      out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    } catch (IOException | RuntimeException e) {
      fail("could not open " + dir.resolve("trace.jsonl") + ": " + e);
    }
  }

  /** Takes the queued lines: each task chained by {@link #write} finds its own there. */
  private void appendQueued() {
    StringBuilder lines;
    synchronized (lock) {
      lines = queued;
      queued = null;
    }
    if (lines != null) {
      append(lines);
    }
  }

  private void append(CharSequence lines) {
    if (out == null) {
      return;
    }
    try {
      out.append(lines);
    } catch (IOException e) {
      fail("could not write " + dir.resolve("trace.jsonl") + ": " + e.getMessage());
      shut();
    }
  }

  private void shut() {
    if (out == null) {
      return;
    }
    try {
      out.close();
    } catch (IOException e) {
      fail("could not complete " + dir.resolve("trace.jsonl") + ": " + e.getMessage());
    } finally {
      out = null;
    }
  }

  private void fail(String why) {
    failure.compareAndSet(null, why);
  }
}
