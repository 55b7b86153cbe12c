package io.capsule.hub.store;

import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.SequencedFrame;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a hub must remember to survive its own restart: every frame it sent to a runner (with its
 * seq) and every runner frame it applied, in the order that happened. Replaying those entries
 * rebuilds the hub's sequencing exactly (the next seq per task, what it still owes a runner, the
 * highest seq it applied), so a restarted hub and a reconnecting runner line up through the normal
 * resume: nothing lost, nothing applied twice.
 *
 * <p>The hub appends <em>before</em> the entry has any effect: a frame is recorded before it is
 * sent or buffered, an applied frame before its event is published and before any {@code ack}
 * covers it. So whatever a runner was told has arrived is in the journal, and whatever is not in it
 * the runner still holds. When {@link #append} fails the hub stops (closing every connection with
 * 1011) rather than acknowledge what it could not keep; restarting it on the same journal is safe.
 *
 * <p>Threading: a hub calls {@link #append} from its one actor, one entry at a time.
 */
public interface HubJournal extends AutoCloseable {

  /** Which way a recorded frame went. */
  enum Direction {
    /** Hub → runner ({@code task.assign}, {@code task.cancel}), as numbered and sent. */
    SENT,
    /** Runner → hub ({@code task.progress}, {@code task.report}), as applied (in seq order). */
    APPLIED
  }

  record Entry(RunnerKey runner, Direction direction, SequencedFrame frame) {
    public Entry {
      Objects.requireNonNull(runner, "runner");
      Objects.requireNonNull(direction, "direction");
      Objects.requireNonNull(frame, "frame");
    }
  }

  /** What earlier hubs recorded here, oldest first; a hub replays it once when it starts. */
  List<Entry> recorded();

  /**
   * Records one entry before returning, as durably as the implementation promises.
   *
   * @throws io.capsule.protocol.ProtocolException with {@code E-PRO-010} when it cannot
   */
  void append(Entry entry);

  /**
   * Records entries that arrived together, in order, as {@link #append} would one by one; a store
   * that writes in batches does it in fewer round trips.
   */
  default void appendAll(List<Entry> entries) {
    entries.forEach(this::append);
  }

  /** Releases the journal (a file lock, a channel). Idempotent. */
  @Override
  void close();

  /** Remembers nothing: a hub without one starts empty after every restart. */
  static HubJournal none() {
    return new HubJournal() {
      @Override
      public List<Entry> recorded() {
        return List.of();
      }

      @Override
      public void append(Entry entry) {}

      @Override
      public void close() {}
    };
  }

  /**
   * Keeps entries in this JVM: a new hub on the same instance resumes where the last one stopped.
   * For tests and for embedders whose hub restarts within one process. Thread-safe.
   */
  static HubJournal inMemory() {
    return new HubJournal() {
      private final List<Entry> entries = new ArrayList<>();

      @Override
      public synchronized List<Entry> recorded() {
        return List.copyOf(entries);
      }

      @Override
      public synchronized void append(Entry entry) {
        entries.add(Objects.requireNonNull(entry));
      }

      @Override
      public void close() {}
    };
  }
}
