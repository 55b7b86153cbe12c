package io.capsule.hub.task;

import java.util.ArrayList;
import java.util.List;

/**
 * Frames of one task recorded together, stored as one row ({@link TaskEventSerializer}): a hub's
 * group commit hands a task entity the dozens of frames a runner sent while the last write was in
 * flight, and a row each cost the store an insert, an index entry and a large-object entry of its
 * own, and Pekko Persistence an envelope, per frame ({@code PersistBench}, benchmarks/README.md).
 * Bounded: {@link #rows} cuts a batch at {@value #MAX_EVENTS} frames or {@value #MAX_CHARS}
 * characters of frames, so a row stays a size any store and any reader handle.
 */
public record TaskEvents(List<TaskEvent> events) implements TaskRow {
  /** At most this many frames in one row. */
  public static final int MAX_EVENTS = 256;

  /** At most this many characters of frames in one row, unless one frame alone is larger. */
  public static final int MAX_CHARS = 256 * 1024;

  public TaskEvents {
    events = List.copyOf(events);
    if (events.size() < 2) {
      throw new IllegalArgumentException("a row of several frames holds 2 or more, not " + events);
    }
  }

  /**
   * {@code batch} as rows, in order: a single frame as itself, several as {@link TaskEvents} of at
   * most {@value #MAX_EVENTS} frames and {@value #MAX_CHARS} characters each (a larger frame is a
   * row of its own).
   */
  public static List<TaskRow> rows(List<TaskEvent> batch) {
    List<TaskRow> rows = new ArrayList<>(1 + batch.size() / MAX_EVENTS);
    List<TaskEvent> row = new ArrayList<>(Math.min(batch.size(), MAX_EVENTS));
    long chars = 0;
    for (TaskEvent e : batch) {
      int size = e.frame().length();
      if (!row.isEmpty() && (row.size() == MAX_EVENTS || chars + size > MAX_CHARS)) {
        rows.add(row(row));
        row = new ArrayList<>(Math.min(batch.size(), MAX_EVENTS));
        chars = 0;
      }
      row.add(e);
      chars += size;
    }
    if (!row.isEmpty()) {
      rows.add(row(row));
    }
    return rows;
  }

  private static TaskRow row(List<TaskEvent> events) {
    return events.size() == 1 ? events.get(0) : new TaskEvents(events);
  }
}
