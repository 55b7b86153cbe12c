package io.capsule.hub.store;

import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

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
 * <p>Threading: a hub calls {@link #appendAllAsync} from its one actor and never waits for it: it
 * holds back the entries' effects until the stage completes, and starts the next write (everything
 * that arrived meanwhile, in order) only then, so writes never overlap. {@link #append} and {@link
 * #appendAll} block their caller; they are for tools and tests.
 */
public interface HubJournal extends AutoCloseable {

  /** Which way a recorded frame went. */
  enum Direction {
    /** Hub → runner ({@code task.assign}, {@code task.cancel}), as numbered and sent. */
    SENT,
    /** Runner → hub ({@code task.progress}, {@code task.report}), as applied (in seq order). */
    APPLIED
  }

  /**
   * One frame as recorded. {@code folded} is 1 but in {@link #restorable()}: there an applied
   * {@code task.progress} may stand for itself and the {@code folded - 1} applied progress frames
   * of the same runner and task right before it, which a restart does not read (it counts them).
   * {@code text}, when not null, is the frame's JSON as it arrived, which a store keeps as is
   * instead of encoding the frame again.
   */
  record Entry(
      RunnerKey runner, Direction direction, SequencedFrame frame, int folded, String text) {
    public Entry {
      Objects.requireNonNull(runner, "runner");
      Objects.requireNonNull(direction, "direction");
      Objects.requireNonNull(frame, "frame");
      if (folded < 1
          || folded > 1 && (direction != Direction.APPLIED || !(frame instanceof TaskProgress))) {
        throw new IllegalArgumentException(
            "only an applied task.progress folds others, and folded >= 1: " + folded);
      }
    }

    public Entry(RunnerKey runner, Direction direction, SequencedFrame frame) {
      this(runner, direction, frame, 1, null);
    }

    /** An entry whose frame arrived as {@code text} (the store keeps that text). */
    public Entry(RunnerKey runner, Direction direction, SequencedFrame frame, String text) {
      this(runner, direction, frame, 1, text);
    }

    /** Equal entries record the same frame; the text it arrived as does not count. */
    @Override
    public boolean equals(Object o) {
      return o instanceof Entry e
          && runner.equals(e.runner)
          && direction == e.direction
          && frame.equals(e.frame)
          && folded == e.folded;
    }

    @Override
    public int hashCode() {
      return Objects.hash(runner, direction, frame, folded);
    }
  }

  /** What earlier hubs recorded here, oldest first: every entry, as written. */
  List<Entry> recorded();

  /**
   * What a hub replays once when it starts: {@link #recorded()}, or a store's shorter equivalent in
   * which runs of applied progress are folded ({@link Entry#folded}), so that a restart does not
   * read every event of history. Replaying either rebuilds the same hub state.
   */
  default List<Entry> restorable() {
    return recorded();
  }

  /**
   * Readies the store for entries of these tasks of {@code projectId}, which are about to come
   * (their runners resume), without waiting: a store that keeps tasks in entities starts them now,
   * so that the first write after a brain moved or restarted does not wait for every task's
   * recovery at once. Nothing by default.
   */
  default void prepare(String projectId, Collection<String> taskIds) {}

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

  /**
   * Records entries that arrived together, in order, without blocking: the stage completes once
   * they are kept as durably as {@link #append} keeps one, or fails ({@code E-PRO-010}) when they
   * cannot be, within the implementation's own bound. Entries of one task are kept all or none;
   * after a failure, entries of other tasks may have been kept (the hub stops, and its successor
   * replays what is there, which is consistent per task).
   *
   * <p>The default calls {@link #appendAll} on the caller's thread: right for a journal that never
   * waits (memory), wrong for one that does; a store overrides it.
   */
  default CompletionStage<Void> appendAllAsync(List<Entry> entries) {
    try {
      appendAll(entries);
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
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
      public CompletionStage<Void> appendAllAsync(List<Entry> entries) {
        return CompletableFuture.completedFuture(null);
      }

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
      public synchronized CompletionStage<Void> appendAllAsync(List<Entry> batch) {
        batch.forEach(Objects::requireNonNull);
        entries.addAll(batch); // kept the moment it is added: nothing to wait for
        return CompletableFuture.completedFuture(null);
      }

      @Override
      public void close() {}
    };
  }
}
