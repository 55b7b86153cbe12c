package io.capsule.runtime.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The trace written off the caller's thread: in order, owner-only, and never silent on failure. */
class TraceFileTest {

  private final ExecutorService io = Executors.newSingleThreadExecutor();
  private final Clock clock = Clock.fixed(Instant.parse("2026-01-02T03:04:05Z"), ZoneOffset.UTC);
  @TempDir Path root;

  @AfterEach
  void stop() throws InterruptedException {
    io.shutdown();
    assertTrue(io.awaitTermination(5, TimeUnit.SECONDS));
  }

  @Test
  void writesEveryLineInOrderIntoOwnerOnlyFiles() throws Exception {
    Path dir = root.resolve("runs/run-1");
    TraceFile trace = new TraceFile(dir, clock, io);
    for (int i = 0; i < 500; i++) {
      trace.write(TraceRecord.of("note").with("i", i));
    }
    trace.close().get(5, TimeUnit.SECONDS);

    List<String> lines = Files.readAllLines(dir.resolve("trace.jsonl"));
    assertEquals(500, lines.size());
    assertEquals(
        "{\"event_type\":\"note\",\"timestamp\":\"2026-01-02T03:04:05Z\",\"i\":499}",
        lines.get(499));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    assertEquals(
        "rw-------",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("trace.jsonl"))));
    assertEquals(Optional.empty(), trace.failure());
  }

  @Test
  void aTraceThatCannotBeOpenedSaysWhyAndTakesNoMoreLines() throws Exception {
    Path notADir = Files.writeString(root.resolve("file"), "");
    TraceFile trace = new TraceFile(notADir.resolve("run-1"), clock, io);
    trace.write(TraceRecord.of("run_start"));
    trace.close().get(5, TimeUnit.SECONDS);

    assertTrue(trace.failure().orElseThrow().contains("could not open"), trace.failure().get());
  }

  @Test
  void theCallersThreadNeverTouchesTheDisk() throws Exception {
    // An executor that only queues: whatever the caller does, no file work may have happened yet.
    java.util.ArrayDeque<Runnable> queued = new java.util.ArrayDeque<>();
    Path dir = root.resolve("runs/run-2");
    TraceFile trace = new TraceFile(dir, clock, queued::add);
    trace.write(TraceRecord.of("run_start"));
    trace.write(TraceRecord.of("run_end"));
    var closed = trace.close();
    assertFalse(Files.exists(dir), "the run directory was made on the caller's thread");

    while (!queued.isEmpty()) {
      queued.poll().run();
    }
    assertTrue(closed.isDone());
    assertEquals(2, Files.readAllLines(dir.resolve("trace.jsonl")).size());
  }

  @Test
  void linesWrittenWhileTheirTaskWaitsShareThatTask() throws Exception {
    java.util.ArrayDeque<Runnable> queued = new java.util.ArrayDeque<>();
    int[] tasks = {0};
    Path dir = root.resolve("runs/run-3");
    TraceFile trace =
        new TraceFile(
            dir,
            clock,
            r -> {
              tasks[0]++;
              queued.add(r);
            });
    for (int i = 0; i < 100; i++) {
      trace.write(TraceRecord.of("note").with("i", i)); // a batch's records, the disk not reached
    }
    var closed = trace.close();
    while (!queued.isEmpty()) {
      queued.poll().run();
    }
    assertTrue(closed.isDone());
    assertEquals(3, tasks[0], "open, the hundred lines, close");
    List<String> lines = Files.readAllLines(dir.resolve("trace.jsonl"));
    assertEquals(100, lines.size());
    for (int i = 0; i < 100; i++) {
      assertTrue(lines.get(i).endsWith("\"i\":" + i + "}"), lines.get(i));
    }
  }

  @Test
  void closingTwiceIsHarmless() throws Exception {
    TraceFile trace = new TraceFile(root.resolve("r"), clock, io);
    trace.write(TraceRecord.of("run_start"));
    trace.close().get(5, TimeUnit.SECONDS);
    trace.write(TraceRecord.of("late")); // after close: dropped, not an error
    trace.close().get(5, TimeUnit.SECONDS);

    assertEquals(1, Files.readAllLines(root.resolve("r/trace.jsonl")).size());
    assertEquals(Optional.empty(), trace.failure());
  }

  @Test
  void aBatchWrittenAtOnceGivesTheLinesWritingEachWouldInOrder() throws Exception {
    Path one = root.resolve("one");
    Path all = root.resolve("all");
    TraceFile each = new TraceFile(one, clock, io);
    TraceFile batch = new TraceFile(all, clock, io);
    List<TraceRecord> records =
        List.of(
            TraceRecord.of("harness_session").with("session_id", "s1").with("model", null),
            TraceRecord.of("harness_retry").with("attempt", 2).with("reason", "quote \" \n"),
            TraceRecord.of("inference")
                .with("turn", 1)
                .with("usage_growth", java.util.Map.of("input", 7L)));
    each.write(TraceRecord.of("run_start"));
    records.forEach(each::write);
    batch.write(TraceRecord.of("run_start"));
    batch.writeAll(records);
    batch.writeAll(List.of()); // nothing, and no empty line
    each.close().get(5, TimeUnit.SECONDS);
    batch.close().get(5, TimeUnit.SECONDS);

    List<String> expected = Files.readAllLines(one.resolve("trace.jsonl"));
    assertEquals(4, expected.size());
    assertEquals(expected, Files.readAllLines(all.resolve("trace.jsonl")));
  }

  @Test
  void aRecordTheRendererCannotWriteFailsAfterTheRecordsBeforeItInABatchAreKept() throws Exception {
    TraceFile trace = new TraceFile(root.resolve("bad"), clock, io);
    List<TraceRecord> records =
        List.of(
            TraceRecord.of("note").with("i", 0),
            TraceRecord.of("note").with("bad", Optional.of("no module for Optional")),
            TraceRecord.of("note").with("i", 2));
    assertThrows(java.io.UncheckedIOException.class, () -> trace.writeAll(records));
    trace.close().get(5, TimeUnit.SECONDS);

    List<String> lines = Files.readAllLines(root.resolve("bad/trace.jsonl"));
    assertEquals(1, lines.size());
    assertTrue(lines.get(0).endsWith("\"i\":0}"), lines.get(0));
  }
}
