package io.capsule.hub;

import io.capsule.hub.queue.QueueEvent;
import io.capsule.hub.queue.QueueStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the project's queue ({@link TaskQueue}) keeps in the store ({@link QueueStore}): that a task
 * waits ({@code QUEUED}), left the queue ({@code PLACED}, {@code CANCELED}), was forgotten ({@code
 * FORGOTTEN}, after which its journal is erased), or was asked to cancel while taken back from a
 * dead runner ({@code CANCEL_REQUESTED}); and, read back at start, the queue a restarted hub
 * resumes with. A task is answered 201 {@code queued} only once its {@code QUEUED} event is kept,
 * and a cancel is answered once its {@code CANCELED} or {@code CANCEL_REQUESTED} is; that a task
 * was placed is written after the fact, without waiting: a hub that crashes in between finds the
 * task's {@code task.assign} in the task journal, so it is not queued again.
 *
 * <p>Thread-safe: the queue calls it under its own lock (never the other way round) and from the
 * store's completion threads.
 */
final class QueueRecord {
  private static final Logger LOG = LoggerFactory.getLogger(QueueRecord.class);

  private final QueueStore store;
  private final TaskBook book;
  private final String projectId;
  private final Set<String> stored = new HashSet<>(); // ids with a QUEUED event in the store
  private final Map<String, Owed> owed = new HashMap<>(); // cancels the store refused, by id

  /** A cancel's write the store refused. */
  private enum Owed {
    /** The queued task's {@code CANCELED}. */
    CANCELED,
    /** A taken-back task's {@code CANCELED}, then its {@code CANCEL_REQUESTED}. */
    BOTH,
    /** The {@code CANCEL_REQUESTED} of a task no runner could hear the cancel of. */
    REQUESTED
  }

  QueueRecord(QueueStore store, TaskBook book, String projectId) {
    this.store = store;
    this.book = book;
    this.projectId = projectId;
  }

  /**
   * The task waits and is about to be kept ({@link #keep}): marked now, under the queue's lock, so
   * a placement racing the store's answer writes its {@code PLACED}.
   */
  synchronized void waiting(String taskId) {
    stored.add(taskId);
  }

  /** Keeps the {@code QUEUED} event of {@code p} (marked {@link #waiting}); completes once kept. */
  CompletionStage<Done> keep(Pending p) {
    return store.append(p.queued());
  }

  /** The store did not keep {@code p}'s {@code QUEUED} event (the submission was refused). */
  synchronized void notKept(String taskId) {
    stored.remove(taskId);
  }

  /** The task was assigned: it leaves the queue in the store too, if it was kept there. */
  void placed(String taskId) {
    boolean wasStored;
    synchronized (this) {
      wasStored = stored.remove(taskId);
    }
    if (wasStored) {
      store.append(QueueEvent.left(QueueEvent.Kind.PLACED, taskId));
    }
  }

  /**
   * Its assignment was refused and it waits again: a task placed at once was never stored as
   * queued, and it must now survive a restart like any queued task (written without waiting).
   */
  void requeued(Pending p) {
    boolean first;
    synchronized (this) {
      first = stored.add(p.taskId());
    }
    if (first) {
      store.append(p.queued());
    }
  }

  /**
   * Canceled while queued; completes once what a restart needs to keep it canceled is in the store.
   * A task queued to be placed again after a take-back ({@code takenBack}) is queued again by every
   * restart (the brain's journal replays the take-back), so its cancel is stored as {@code
   * CANCEL_REQUESTED}: a {@code CANCELED} alone is only the end of a stored wait, and the queue's
   * state drops it for a task that never had one. A write the store refuses is owed ({@link
   * #payOwed}).
   */
  CompletionStage<Done> canceled(String taskId, boolean takenBack) {
    boolean wasStored;
    synchronized (this) {
      wasStored = stored.remove(taskId);
    }
    CompletionStage<Done> left =
        wasStored
            ? owedIfRefused(
                taskId,
                takenBack ? Owed.BOTH : Owed.CANCELED,
                store.append(QueueEvent.left(QueueEvent.Kind.CANCELED, taskId)))
            : CompletableFuture.completedFuture(Done.getInstance());
    return takenBack ? left.thenCompose(done -> cancelRequested(taskId)) : left;
  }

  /**
   * A cancel was asked for {@code taskId} where no runner could hear it, the brain having taken the
   * task back; completes once kept, so a restart ends the task canceled instead of placing it
   * again. A write the store refuses is owed ({@link #payOwed}).
   */
  CompletionStage<Done> cancelRequested(String taskId) {
    return owedIfRefused(
        taskId,
        Owed.REQUESTED,
        store.append(QueueEvent.left(QueueEvent.Kind.CANCEL_REQUESTED, taskId)));
  }

  /**
   * Writes again what a refused cancel of {@code taskId} left unwritten, if anything: empty when
   * nothing is owed. The cancel was carried out in this hub (the task will not be placed here), but
   * the API answered 503, and a restart reading the store would place the task again; the client's
   * cancel sent again, the answer's advice, comes here.
   */
  Optional<CompletionStage<Done>> payOwed(String taskId) {
    Owed was;
    synchronized (this) {
      was = owed.remove(taskId);
    }
    if (was == null) {
      return Optional.empty();
    }
    return Optional.of(
        switch (was) {
          case CANCELED -> canceled(taskId, false);
          case BOTH -> canceled(taskId, true);
          case REQUESTED -> cancelRequested(taskId);
        });
  }

  /** Notes what is owed for {@code taskId} if {@code write} fails; the failure goes on. */
  private CompletionStage<Done> owedIfRefused(
      String taskId, Owed what, CompletionStage<Done> write) {
    return write.whenComplete(
        (done, refused) -> {
          if (refused != null) {
            synchronized (this) {
              if (what != Owed.REQUESTED) {
                stored.add(taskId); // its QUEUED is still open in the store
              }
              owed.put(taskId, what);
            }
          }
        });
  }

  /**
   * Rebuilds the queue from what the store kept, in order, into the book (restored from the task
   * journal before this): tasks canceled while waiting are shown canceled, deleted tasks are
   * dropped, a task taken back from a dead runner and canceled ({@code CANCEL_REQUESTED}) is marked
   * so; returns the tasks still waiting, in queue order (unless the task journal already holds
   * their assignment, so they are in the book). Call once, before any runner connects.
   */
  List<Pending> restore(List<QueueEvent> events) {
    Map<String, QueueEvent> waiting = new LinkedHashMap<>();
    Map<String, QueueEvent> canceled = new LinkedHashMap<>();
    for (QueueEvent e : events) {
      switch (e.kind()) {
        case QUEUED -> waiting.put(e.taskId(), e);
        case PLACED -> waiting.remove(e.taskId());
        case CANCELED -> {
          QueueEvent was = waiting.remove(e.taskId());
          if (was != null) {
            canceled.put(e.taskId(), was);
          }
        }
        case CANCEL_REQUESTED ->
            // Its take-back, replayed from the brain's journal, then ends it canceled (reclaim).
            book.get(e.taskId()).ifPresent(TaskBook.Task::markCancelRequested);
        case FORGOTTEN -> {
          // Deleted through the API: gone from the book although the task journal still has it.
          waiting.remove(e.taskId());
          canceled.remove(e.taskId());
          book.forgotten(e.taskId());
        }
      }
    }
    for (QueueEvent e : canceled.values()) {
      Pending p = Pending.of(e);
      if (book.add(p.task())) {
        p.task().endUnplaced("canceled", "canceled while queued; it never reached a runner");
      }
    }
    List<Pending> queue = new ArrayList<>();
    for (QueueEvent e : waiting.values()) {
      Pending p = Pending.of(e);
      if (book.add(p.task())) {
        queue.add(p);
        synchronized (this) {
          stored.add(e.taskId());
        }
      }
    }
    return queue;
  }

  /**
   * Forgets a finished task for good: the deletion is stored first (so a restarted hub does not
   * bring the task back), then the book forgets it and its events and snapshots are erased from the
   * store. Fails when the store did not keep the deletion; then nothing is forgotten.
   */
  CompletionStage<TaskBook.Forget> forget(String taskId) {
    Optional<TaskBook.Task> task = book.get(taskId);
    if (task.isEmpty()) {
      return CompletableFuture.completedFuture(TaskBook.Forget.UNKNOWN);
    }
    if (!task.get().finished()) {
      return CompletableFuture.completedFuture(TaskBook.Forget.RUNNING);
    }
    return store
        .append(QueueEvent.left(QueueEvent.Kind.FORGOTTEN, taskId))
        .thenApply(
            done -> {
              synchronized (this) {
                owed.remove(taskId); // forgotten for good: no cancel to keep any more
              }
              return book.forget(taskId);
            })
        .thenApply(
            forgot -> {
              if (forgot == TaskBook.Forget.FORGOTTEN) {
                erase(taskId);
              }
              return forgot;
            });
  }

  /**
   * Forgets, as a DELETE would (stored, so a restart keeps them forgotten), every task that
   * finished before {@code cutoff} ({@code capsule.hub.retention}). A deletion the store refuses is
   * tried again at the next sweep.
   */
  void sweep(Instant cutoff) {
    book.finishedBefore(cutoff).forEach(this::forget);
  }

  /**
   * Drops the forgotten task's events and snapshots from the store, not waited for: the deletion is
   * already kept ({@code FORGOTTEN}), and a restart whose store still holds the events forgets the
   * task again from it.
   */
  private void erase(String taskId) {
    store
        .eraseTask(projectId, taskId)
        .whenComplete(
            (done, e) -> {
              if (e != null) {
                LOG.warn(
                    "task {}: its events stay in the store, not erased: {}", taskId, e.toString());
              }
            });
  }
}
