package io.capsule.hub;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.hub.metrics.QueueWatch;
import io.capsule.hub.placement.Placement;
import io.capsule.hub.placement.Reclaim;
import io.capsule.hub.placement.RunnerView;
import io.capsule.hub.placement.Verdict;
import io.capsule.hub.queue.QueueEvent;
import io.capsule.hub.queue.QueueStore;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RunnerInfo;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.TaskAssign;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;

/**
 * The project's queue: tasks no runner can take now wait here (state {@code queued}) and are placed
 * by {@link Placement#plan} over the whole queue, in queue order, whenever that can change the
 * answer: a task submitted, a runner connected (it may be the one a task names), a report freeing a
 * slot, an assignment completing.
 *
 * <p>Thread-safe: HTTP request threads submit and cancel, the hub's event stream drains. Planning
 * happens under this object's lock and counts the places still being assigned ({@code inFlight}) as
 * used slots, so two plans racing never put more tasks on a runner than it has slots; the
 * assignments themselves go to the hub's actor outside the lock.
 *
 * <p>Durable with a store: what it keeps there, and how a restart reads it back, is {@link
 * QueueRecord}'s.
 *
 * <p>Over 400 lines: submitting, placing, taking back and canceling are decisions under one lock
 * over the same three places a task can be (queued, being assigned, placed), and read best
 * together; what is not under the lock went out ({@link QueueRecord}, {@link CancelOutcome}).
 */
final class TaskQueue {

  /** What {@code POST /v1/tasks} answers; {@code retryAfter} only with 429. */
  record Answer(StatusCode status, ObjectNode body, Optional<Duration> retryAfter) {
    static Answer of(StatusCode status, ObjectNode body) {
      return new Answer(status, body, Optional.empty());
    }

    /** A refusal with its catalog code: {@code error}, {@code code} and {@code hint}. */
    static Answer refused(StatusCode status, Diagnostic d) {
      return of(status, body(d));
    }

    /** The body every refusal of the task API carries. */
    static ObjectNode body(Diagnostic d) {
      return error(d.toString()).put("code", d.code().id()).put("hint", d.hint());
    }
  }

  private final HubServer hub;
  private final TaskBook book;
  private final String projectId;
  private final int max;
  private volatile QueueWatch watch = QueueWatch.NONE;
  private final Duration retryAfter;
  private final LinkedList<Pending> queue = new LinkedList<>();
  private final Map<String, String> inFlight = new HashMap<>(); // task id → runner id
  // task id → completed once its in-flight assignment settled (sent, or back in the queue)
  private final Map<String, CompletableFuture<Void>> assigning = new HashMap<>();
  private final QueueRecord record;
  private final int frameCap;

  /**
   * @param frameCap the runners' frame cap ({@code ProtocolConfig.frameCapBytes}): a task whose
   *     assignment would be above it under its longest wire id is refused at submission
   */
  TaskQueue(
      HubServer hub,
      TaskBook book,
      String projectId,
      int max,
      Duration retryAfter,
      QueueStore store,
      int frameCap) {
    this.record = new QueueRecord(store, book, projectId);
    this.frameCap = frameCap;
    if (max < 0) {
      throw new IllegalArgumentException("capsule.hub.queue-max must be >= 0, not " + max);
    }
    this.hub = hub;
    this.book = book;
    this.projectId = projectId;
    this.max = max;
    this.retryAfter = retryAfter;
  }

  /**
   * Places {@code p} now, or queues it, or refuses it: 201 assigned, 201 queued, 404 ({@code
   * E-HUB-003}) for a named runner nobody knows, 409 ({@code E-API-004}) for a taken id, 429
   * ({@code E-HUB-002}, with {@code Retry-After}) when the queue is full, 413 ({@code E-PRO-005})
   * when its assignment would be above the frame cap under its longest wire id.
   */
  CompletionStage<Answer> submit(Pending p) {
    Optional<Diagnostic> tooLarge = p.aboveFrameCap(frameCap);
    if (tooLarge.isPresent()) {
      return done(Answer.refused(StatusCodes.CONTENT_TOO_LARGE, tooLarge.get()));
    }
    List<Pending> placeNow;
    synchronized (this) {
      if (book.get(p.taskId()).isPresent()) {
        return done(
            Answer.refused(
                StatusCodes.CONFLICT,
                Diagnostic.of(Code.E_API_004, "task " + p.taskId() + " exists")));
      }
      List<Pending> all = new ArrayList<>(queue);
      all.add(p);
      List<Verdict> plan = Placement.plan(all.stream().map(Pending::waiting).toList(), views());
      Verdict mine = plan.get(plan.size() - 1);
      if (mine instanceof Verdict.NoSuchRunner none) {
        return done(
            Answer.refused(
                StatusCodes.NOT_FOUND,
                Diagnostic.of(
                    Code.E_HUB_003,
                    "no runner '" + none.runnerId() + "' is known in project " + projectId)));
      }
      if (mine instanceof Verdict.Wait && queue.size() >= max) {
        Diagnostic d =
            Diagnostic.of(
                Code.E_HUB_002,
                queue.size()
                    + " tasks of project "
                    + projectId
                    + " already wait (capsule.hub.queue-max = "
                    + max
                    + ")");
        return CompletableFuture.completedFuture(
            new Answer(StatusCodes.TOO_MANY_REQUESTS, Answer.body(d), Optional.of(retryAfter)));
      }
      book.add(p.task());
      queue.add(p);
      watch.queued(p.taskId(), p.capsule()); // a log line; the wait is timed at placement
      placeNow = take(plan);
      if (!placeNow.contains(p)) {
        record.waiting(p.taskId());
      }
    }
    CompletionStage<Answer> answer =
        placeNow.contains(p) ? assign(p).thenApply(ok -> answerFor(p)) : keep(p);
    placeNow.stream().filter(q -> q != p).forEach(this::assign);
    return answer;
  }

  /** Answers 201 {@code queued} once the store kept the task; forgets it when the store failed. */
  private CompletionStage<Answer> keep(Pending p) {
    return record
        .keep(p)
        .handle(
            (ok, failure) -> {
              if (failure == null) {
                return answerFor(p);
              }
              synchronized (this) {
                record.notKept(p.taskId());
                boolean wasQueued = queue.remove(p);
                if (wasQueued) {
                  book.remove(p.taskId());
                  return Answer.refused(
                      StatusCodes.SERVICE_UNAVAILABLE,
                      Diagnostic.of(
                          Code.E_HUB_004,
                          "the hub's store did not keep the queued task "
                              + p.taskId()
                              + ": "
                              + failure));
                }
              }
              // Placed meanwhile: its task.assign is its record now.
              return answerFor(p);
            });
  }

  /**
   * Rebuilds the queue from what the store kept ({@link QueueRecord#restore}). Call once, before
   * any runner connects.
   */
  synchronized void restore(List<QueueEvent> events) {
    queue.addAll(record.restore(events));
  }

  private Answer answerFor(Pending p) {
    ObjectNode view = p.task().view();
    if (!"too_large".equals(p.task().state())) {
      return Answer.of(StatusCodes.CREATED, view);
    }
    // The task cannot fit in one frame: refused at once, and not kept.
    book.remove(p.taskId());
    return Answer.of(
        StatusCodes.CONTENT_TOO_LARGE,
        error(view.path("report").path("summary").asText())
            .put("code", Code.E_PRO_005.id())
            .put("hint", Code.E_PRO_005.hint()));
  }

  /** Forgets a finished task for good ({@link QueueRecord#forget}). */
  CompletionStage<TaskBook.Forget> forget(String taskId) {
    return record.forget(taskId);
  }

  /** Forgets the tasks that finished before {@code cutoff} ({@link QueueRecord#sweep}). */
  void sweep(java.time.Instant cutoff) {
    record.sweep(cutoff);
  }

  /**
   * Takes back the unfinished tasks of {@code dead}, a runner gone past {@code dead-after}, by the
   * wire ids of the attempts it had ({@link io.capsule.hub.placement.Attempt}): each goes to the
   * front of the queue, in the order it was assigned, and is placed again as its next attempt on a
   * runner with its capsule and a free slot ({@code dead} included, once back), or waits. A task
   * whose cancel was requested before ends {@code canceled} instead: its runner never confirmed,
   * and nobody wants it run again. Nothing is stored here: the brain journaled the cancel that took
   * each task back ({@link Reclaim}), from which a restarted hub takes them back again, and the
   * cancel's mark is stored where it was asked (the brain's journal when it sent one to the runner,
   * else the queue's {@code CANCEL_REQUESTED}, see {@link #cancel}), so a restart ends it the same.
   */
  void reclaim(RunnerKey dead, List<String> wireIds) {
    synchronized (this) {
      for (int i = wireIds.size() - 1; i >= 0; i--) {
        String taskId = io.capsule.hub.placement.Attempt.taskOf(wireIds.get(i));
        Optional<TaskBook.Task> task = book.get(taskId);
        Optional<TaskAssign> a = task.flatMap(TaskBook.Task::assignment);
        if (a.isEmpty()
            || !a.get().taskId().equals(wireIds.get(i))
            || task.get().finished()
            || isQueued(taskId)) {
          // Forgotten, finished, already taken back (a restart's restore said it), or that attempt
          // is not its latest any more (placed again since).
          continue;
        }
        task.get().takenFrom(dead);
        if (task.get().cancelRequested()) {
          task.get()
              .endUnplaced(
                  "canceled",
                  "canceled; runner " + dead.runnerId() + " was gone before it confirmed");
          continue;
        }
        queue.addFirst(Pending.reclaimed(a.get(), task.get()));
      }
    }
    drain();
  }

  private boolean isQueued(String taskId) {
    return queue.stream().anyMatch(p -> p.taskId().equals(taskId)) || inFlight.containsKey(taskId);
  }

  /** Who hears of tasks queued and placed (meters, log lines); set once, before the first task. */
  void watch(QueueWatch w) {
    this.watch = w;
  }

  /** Places what can be placed now; call it whenever a runner connects or a slot frees. */
  void drain() {
    List<Pending> placeNow;
    synchronized (this) {
      if (queue.isEmpty()) {
        return;
      }
      placeNow = take(Placement.plan(queue.stream().map(Pending::waiting).toList(), views()));
    }
    placeNow.forEach(this::assign);
  }

  /**
   * Cancels a task where it is now, decided under this queue's lock so that it cannot fall between
   * two places: a queued task ends at once ({@link CancelOutcome#ENDED}); a task whose assignment
   * is on its way to the brain is canceled once that assignment settled, under the wire id it got
   * (without the wait, the brain could hear the cancel before the assign and answer "unknown"); a
   * placed task's runner hears it under its current attempt's wire id. The mark that the cancel was
   * asked is set under the lock too: a take-back the queue has not heard of yet (the brain
   * journaled it, its notice is on the way) then ends the task canceled instead of placing it again
   * ({@link #reclaim}), and the cancel waits for that end rather than answering "finished".
   */
  CompletionStage<CancelOutcome> cancel(String taskId) {
    TaskBook.Task task;
    CompletableFuture<Void> settling;
    String wireId;
    synchronized (this) {
      Optional<TaskBook.Task> known = book.get(taskId);
      if (known.isEmpty()) {
        return CompletableFuture.completedFuture(CancelOutcome.UNKNOWN);
      }
      Optional<CompletionStage<Done>> owed = record.payOwed(taskId);
      if (owed.isPresent()) {
        // Canceled here before, but the store refused it: kept now, answered as that cancel.
        TaskBook.Task canceled = known.get();
        return owed.get().thenCompose(kept -> CancelOutcome.afterBrain(Optional.empty(), canceled));
      }
      Optional<CompletionStage<Done>> kept = cancelQueued(taskId);
      if (kept.isPresent()) {
        return kept.get().thenApply(done -> CancelOutcome.ENDED);
      }
      task = known.get();
      if (task.finished()) {
        return CompletableFuture.completedFuture(CancelOutcome.FINISHED);
      }
      task.markCancelRequested();
      settling = assigning.get(taskId);
      wireId = task.assignment().map(TaskAssign::taskId).orElse(taskId);
    }
    if (settling != null) {
      return settling.thenCompose(settled -> cancel(taskId));
    }
    return hub.cancel(projectId, wireId, "canceled through the hub API")
        .thenCompose(
            sent ->
                sent.isPresent()
                    // The brain journaled the cancel it sent: a restart replays it from there.
                    ? CancelOutcome.afterBrain(sent, task)
                    // Nothing journaled: the brain took the task back (or it just finished). The
                    // mark is stored before the answer, or a restart would place the task again.
                    : record
                        .cancelRequested(taskId)
                        .thenCompose(kept -> CancelOutcome.afterBrain(sent, task)));
  }

  /**
   * Ends a queued task at once (canceled, never placed), completing once the store kept that; empty
   * when it is not queued (running, finished, being assigned, or unknown). Under the lock.
   */
  private Optional<CompletionStage<Done>> cancelQueued(String taskId) {
    for (Pending p : queue) {
      if (p.taskId().equals(taskId)) {
        queue.remove(p);
        boolean takenBack = !p.task().gaveUp().isEmpty();
        CompletionStage<Done> kept = record.canceled(taskId, takenBack);
        p.task().markCancelRequested();
        p.task()
            .endUnplaced(
                "canceled",
                takenBack
                    ? "canceled while queued to be placed again"
                    : "canceled while queued; it never reached a runner");
        return Optional.of(kept);
      }
    }
    return Optional.empty();
  }

  synchronized int size() {
    return queue.size();
  }

  /** Queued tasks in queue order (a snapshot), then every other task by id. */
  synchronized java.util.Comparator<TaskBook.Task> order() {
    Map<String, Integer> position = new HashMap<>();
    for (Pending p : queue) {
      position.put(p.taskId(), position.size());
    }
    return java.util.Comparator.<TaskBook.Task>comparingInt(
            t -> position.getOrDefault(t.id, Integer.MAX_VALUE))
        .thenComparing(t -> t.id);
  }

  /**
   * Moves the placed ones of {@code plan} from the queue to {@code inFlight}; the rest keep their
   * place and learn the plan's reason. Under the lock.
   */
  private List<Pending> take(List<Verdict> plan) {
    Map<String, Verdict> byTask = new HashMap<>();
    plan.forEach(v -> byTask.put(v.taskId(), v));
    List<Pending> placed = new ArrayList<>();
    for (Pending p : List.copyOf(queue)) {
      Verdict v = byTask.get(p.taskId());
      if (v instanceof Verdict.Place place) {
        queue.remove(p);
        inFlight.put(p.taskId(), place.runnerId());
        assigning.put(p.taskId(), new CompletableFuture<>());
        placed.add(p);
      } else if (v instanceof Verdict.Wait w) {
        p.task().stillWaiting(w.reason());
      }
    }
    return placed;
  }

  /** What placement sees: open tasks plus the places being assigned count as used slots. */
  private List<RunnerView> views() {
    Map<String, Integer> assigning = new HashMap<>();
    List<RunnerInfo> runners = hub.runners(projectId);
    for (Map.Entry<String, String> e : inFlight.entrySet()) {
      boolean alreadyOpen =
          runners.stream()
              .anyMatch(
                  r ->
                      r.key().runnerId().equals(e.getValue())
                          && r.openTasks().contains(e.getKey())); // task ids, not wire ids
      if (!alreadyOpen) {
        assigning.merge(e.getValue(), 1, Integer::sum);
      }
    }
    return runners.stream()
        .map(
            r ->
                RunnerView.announced(
                    r.key().runnerId(),
                    r.capabilities(),
                    r.openTasks().size() + assigning.getOrDefault(r.key().runnerId(), 0),
                    r.connected()))
        .toList();
  }

  /**
   * Sends the assignment. A task the hub cannot frame ({@code E-PRO-005}) never will be: it ends
   * {@code too_large}. Any other refusal (the runner's replay buffer is full) puts it back at the
   * head of the queue for the next drain.
   */
  private CompletionStage<Void> assign(Pending p) {
    String runnerId;
    synchronized (this) {
      runnerId = inFlight.get(p.taskId());
    }
    RunnerKey key = new RunnerKey(projectId, runnerId);
    p.task().placed(key);
    // Before it is sent: a runner that dies right after gives back a task the book can re-assign.
    p.task().assignedAs(new TaskAssign(p.spec(), p.role(), p.invocation()));
    return hub.assign(key, p.spec(), p.role(), p.invocation())
        .handle(
            (ok, e) -> {
              CompletableFuture<Void> settled;
              boolean placed = e == null;
              synchronized (this) {
                inFlight.remove(p.taskId());
                settled = assigning.remove(p.taskId());
                if (e != null) {
                  Throwable cause = e instanceof CompletionException ? e.getCause() : e;
                  if (cause instanceof DiagnosticException d && d.code() == Code.E_PRO_005) {
                    p.task().endUnplaced("too_large", d.diagnostic().render());
                  } else {
                    p.task().requeued(String.valueOf(cause));
                    queue.addFirst(p);
                    record.requeued(p);
                  }
                  // No drain here: what failed would be planned again at once, in a loop. The next
                  // runner or report event drains.
                }
              }
              // Outside the lock: a cancel waiting on it decides again, taking the lock itself.
              if (settled != null) {
                settled.complete(null);
              }
              return placed;
            })
        .thenAccept(
            ok -> {
              if (ok) {
                record.placed(p.taskId());
                watch.placed(p.taskId(), key.toString(), p.task().createdAt); // wait time, log
                drain(); // the slot counted while assigning may now be counted once, not twice
              }
            });
  }

  private static CompletionStage<Answer> done(Answer answer) {
    return CompletableFuture.completedFuture(answer);
  }

  private static ObjectNode error(String message) {
    return JsonNodeFactory.instance.objectNode().put("error", message);
  }
}
