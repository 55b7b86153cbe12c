package io.capsule.hub.store;

import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.SequencedFrame;
import java.util.ArrayList;
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
