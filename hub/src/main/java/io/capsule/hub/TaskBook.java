package io.capsule.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.hub.events.LocalFeed;
import io.capsule.hub.events.TaskEntry;
import io.capsule.hub.placement.Attempt;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The reference hub's memory of its tasks: what was submitted, the progress applied so far (each
 * frame once, in seq order, as the protocol's hub guarantees), and the report. Subscribers of a
 * task get the history from an event id, then every later event, with no gap and no duplicate: the
 * snapshot and the registration happen under the task's lock.
 *
 * <p>Thread-safe: written from the hub's event stream, read from HTTP request threads.
 *
 * <p>Just over 400 lines: the journal's replay ({@code replay}) lives here with the live rules, so
 * a restored book and a live one number a task's events across its placements by the same code.
 */
final class TaskBook {

  /** A task: immutable facts plus a guarded log. */
  static final class Task {
    final String id;
    final String capsule;
    final ObjectNode spec;
    // Empty while the task waits in the project's queue; set once when it is placed.
    private Optional<RunnerKey> runner;
    private Optional<String> waiting = Optional.empty();
    // Every entry without a store; with one only the unplaced report (the journal has the rest),
    // so a hub's heap does not grow with every event of every task it ever ran.
    private final List<TaskEntry> log = new ArrayList<>();
    private boolean keepsLog = true;
    // When this hub learned the task finished (its report, or its end unplaced): for retention.
    private Optional<java.time.Instant> finishedAt = Optional.empty();
    private int events;
    // When this hub learned of the task (a task restored from the store: when the hub started),
    // and when anything about it last changed: the page's age column, the queue's wait time.
    final java.time.Instant createdAt = java.time.Instant.now();
    private java.time.Instant updatedAt = createdAt;
    private final List<Consumer<TaskEntry>> subscribers = new ArrayList<>();
    // The book's push to every node's watchers (set when the book takes the task).
    private java.util.concurrent.atomic.AtomicReference<BiConsumer<String, TaskEntry>> published =
        new java.util.concurrent.atomic.AtomicReference<>((id, e) -> {});
    // Whether its events go to that push: once a watcher asked for the task (subscribe), or for
    // every unfinished task a restored book holds (watchers of a brain that moved are elsewhere).
    // Before that nobody on any node listens: an event is neither serialized nor sent.
    private boolean pushed;
    // Ended without a runner: its closing report is in this book only, never in a task journal.
    private boolean endedUnplaced;
    private Optional<ObjectNode> report = Optional.empty();
    private String state = "assigned";
    private boolean cancelRequested;
    // The last event id, and what this placement's seqs are shifted by (EventIds counts the same
    // way over the journal): a task placed again continues its ids after the old run's.
    private long lastId;
    private long idOffset;
    // Runners it was taken from, gone past dead-after: it is not placed on them again.
    private final Set<String> gaveUp = new java.util.TreeSet<>();
    // The assignment as last sent: a task taken back is assigned again the same way.
    private Optional<io.capsule.protocol.frame.TaskAssign> assignment = Optional.empty();
    // Completed once, with this task, when it gets its report (from a runner, or ended unplaced):
    // what a cancel the brain could not deliver waits on (TaskQueue#cancel).
    private final java.util.concurrent.CompletableFuture<Task> ended =
        new java.util.concurrent.CompletableFuture<>();

    Task(String id, String capsule, RunnerKey runner, ObjectNode spec) {
      this(id, capsule, Optional.of(runner), spec, "assigned");
    }

    private Task(
        String id, String capsule, Optional<RunnerKey> runner, ObjectNode spec, String state) {
      this.id = id;
      this.capsule = capsule;
      this.runner = runner;
      this.spec = spec;
      this.state = state;
    }

    /** A task no runner can take now: state {@code queued}, no runner, {@code reason} shown. */
    static Task queued(String id, String capsule, ObjectNode spec, String reason) {
      Task t = new Task(id, capsule, Optional.empty(), spec, "queued");
      t.waiting = Optional.of(reason);
      return t;
    }

    /** The queue placed it: from now on it is an assigned task like any other. */
    synchronized void placed(RunnerKey on) {
      runner = Optional.of(on);
      waiting = Optional.empty();
      if ("queued".equals(state)) {
        state = "assigned";
      }
    }

    /** Its assignment was refused (e.g. the runner's buffer is full): back in the queue. */
    synchronized void requeued(String reason) {
      runner = Optional.empty();
      state = "queued";
      waiting = Optional.of("its assignment was refused, waiting to be placed again: " + reason);
    }

    /**
     * Taken from {@code dead}, gone past {@code dead-after}, to be placed again: queued, its next
     * run's event ids counting on from its last. Idempotent (a restart's restore, then the brain's
     * notice, may both say it).
     */
    synchronized void takenFrom(RunnerKey dead) {
      gaveUp.add(dead.runnerId());
      idOffset = lastId;
      if (report.isEmpty()) {
        runner = Optional.empty();
        state = "queued";
        waiting =
            Optional.of(
                "runner "
                    + dead.runnerId()
                    + " was gone past dead-after; waiting to be placed again ("
                    + io.capsule.config.diag.Code.E_HUB_008.id()
                    + ")");
      }
    }

    /** It was assigned as {@code a} (the frame as sent, or as the journal kept it). */
    synchronized void assignedAs(io.capsule.protocol.frame.TaskAssign a) {
      assignment = Optional.of(a);
    }

    /** The assignment it last got, if it ever got one. */
    synchronized Optional<io.capsule.protocol.frame.TaskAssign> assignment() {
      return assignment;
    }

    /** Runners it was taken from ({@link #takenFrom}), by id. */
    synchronized Set<String> gaveUp() {
      return Set.copyOf(gaveUp);
    }

    synchronized boolean cancelRequested() {
      return cancelRequested;
    }

    /** Still queued; {@code reason} is why (the latest plan's words). */
    synchronized void stillWaiting(String reason) {
      waiting = Optional.of(reason);
    }

    synchronized Optional<RunnerKey> runner() {
      return runner;
    }

    /**
     * Ends a task that never reached a runner (canceled, or refused when its turn came): its state,
     * and a closing {@code report} event so an SSE watcher's stream ends as for any finished task.
     */
    synchronized void endUnplaced(String endState, String why) {
      state = endState;
      waiting = Optional.empty();
      ObjectNode r = JsonNodeFactory.instance.objectNode();
      r.put("task_id", id);
      r.put("status", endState);
      r.put("summary", why);
      report = Optional.of(r);
      endedUnplaced = true;
      finishedAt = Optional.of(java.time.Instant.now());
      append(new TaskEntry(lastId + 1, "report", r));
      ended.complete(this);
    }

    /** Completes once the task has its report: a runner's, or its end without a runner. */
    java.util.concurrent.CompletionStage<Task> ended() {
      return ended.copy();
    }

    /** True when the hub ended it canceled without a runner's report (queued, or taken back). */
    synchronized boolean canceledUnplaced() {
      return endedUnplaced && "canceled".equals(state);
    }

    synchronized ObjectNode view() {
      ObjectNode n = summary();
      n.set("task", spec);
      n.set("report", report.map(JsonNode.class::cast).orElse(JsonNodeFactory.instance.nullNode()));
      return n;
    }

    /** The task without its bodies (spec, report): what a list shows. */
    synchronized ObjectNode summary() {
      ObjectNode n = JsonNodeFactory.instance.objectNode();
      n.put("id", id);
      n.put("capsule", capsule);
      if (runner.isPresent()) {
        n.put("runner", runner.get().toString());
      } else {
        n.putNull("runner");
      }
      n.put("state", state);
      // Which run of the task this is (Attempt): 1 until it is taken from a runner gone past
      // dead-after and placed again; while it waits to be placed again, the attempt taken back.
      String wireId = assignment.map(io.capsule.protocol.frame.TaskAssign::taskId).orElse(id);
      n.put("attempt", Attempt.numberOf(wireId));
      n.put("attempt_id", wireId);
      waiting.ifPresent(w -> n.put("waiting", w));
      n.put("cancel_requested", cancelRequested);
      n.put("events", events);
      n.put("created_at", createdAt.toString()); // ISO-8601, UTC
      n.put("updated_at", updatedAt.toString());
      return n;
    }

    synchronized boolean finished() {
      return report.isPresent();
    }

    /**
     * The entries after {@code afterId} and, atomically with that snapshot, a registration of
     * {@code live} for every later entry: no gap, no duplicate. With {@code journaled} the history
     * holds only what no task journal has (the report of a task that ended unplaced): the journal
     * serves the rest.
     */
    synchronized LocalFeed.Subscription subscribe(
        long afterId, boolean journaled, Consumer<TaskEntry> live) {
      List<TaskEntry> history =
          journaled && !endedUnplaced
              ? List.of()
              : log.stream().filter(e -> e.id() > afterId).toList();
      subscribers.add(live);
      // Under this lock with the snapshot: every later event is pushed to the watcher's node, and
      // every earlier one is in the history (or, with a store, already in the journal).
      pushed = true;
      return new LocalFeed.Subscription(
          history,
          () -> {
            synchronized (this) {
              subscribers.remove(live);
            }
          });
    }

    private synchronized void append(TaskEntry e) {
      events++;
      lastId = e.id();
      updatedAt = java.time.Instant.now();
      if (keepsLog || endedUnplaced) {
        log.add(e);
      }
      for (Consumer<TaskEntry> s : List.copyOf(subscribers)) {
        s.accept(e);
      }
      if (pushed) {
        published.get().accept(id, e);
      }
    }

    /** Its events go to every node's watchers from now on, asked for or not. */
    private synchronized void pushEvents() {
      pushed = true;
    }

    /**
     * {@code n} progress events a restore did not read ({@link
     * io.capsule.hub.store.HubJournal.Entry#folded}).
     */
    private synchronized void counted(int n) {
      events += n;
    }

    private synchronized void onProgress(TaskProgress p) {
      if ("state".equals(p.kind()) && p.payload().isTextual()) {
        state = p.payload().asText();
      } else if ("state".equals(p.kind()) && p.payload().has("phase")) {
        state = p.payload().get("phase").asText().toLowerCase(java.util.Locale.ROOT);
      }
      append(TaskEntry.of(p).after(idOffset));
    }

    private synchronized void onReport(TaskReport r) {
      report = Optional.of(r.report().json());
      finishedAt = Optional.of(java.time.Instant.now());
      state = r.report().status();
      append(TaskEntry.of(r).after(idOffset));
      ended.complete(this);
    }

    synchronized String state() {
      return state;
    }

    synchronized void markCancelRequested() {
      cancelRequested = true;
    }
  }

  private final Map<String, Task> tasks = new ConcurrentHashMap<>();
  private final boolean keepsLogs;
  private final java.util.concurrent.atomic.AtomicReference<BiConsumer<String, TaskEntry>>
      publisher = new java.util.concurrent.atomic.AtomicReference<>((id, e) -> {});

  /** A book that keeps every task's events: the hub has no store to read them from. */
  TaskBook() {
    this(true);
  }

  /**
   * @param keepsLogs false when the hub's store holds the events (its events endpoint reads them
   *     there): the book then counts them instead of keeping them
   */
  TaskBook(boolean keepsLogs) {
    this.keepsLogs = keepsLogs;
  }

  /**
   * Ids of tasks this book forgot ({@link #forget}). The hub's sequencing still knows them (their
   * seqs, their runner), so a new task under one of them would collide there: they are not reused.
   */
  private final Set<String> forgotten = ConcurrentHashMap.newKeySet();

  /** Records a submitted task; false when the id is taken. */
  boolean add(Task task) {
    synchronized (task) {
      task.keepsLog = keepsLogs;
      task.published = publisher;
    }
    return tasks.putIfAbsent(task.id, task) == null;
  }

  /**
   * Hands every event appended from now on, of every task a watcher asked for (and, after {@link
   * #pushAll}, of every task the book held then), to {@code to} (the cluster-wide live push):
   * called under the task's lock, in order, so {@code to} must only hand it on.
   */
  void publishTo(BiConsumer<String, TaskEntry> to) {
    publisher.set(to);
  }

  /**
   * Pushes every task's events from now on, watched or not: for a restored book, whose tasks may
   * have watchers on other nodes that asked the brain before it moved. A task is otherwise pushed
   * only once a watcher asked for it ({@link Task#subscribe}): the watcher's journal read, which
   * starts after that, has every event appended before.
   */
  void pushAll() {
    tasks.values().forEach(Task::pushEvents);
  }

  /** True when {@code id} named a task this book forgot. */
  boolean wasForgotten(String id) {
    return forgotten.contains(id);
  }

  /** What {@link #forget} did. */
  enum Forget {
    FORGOTTEN,
    UNKNOWN,
    RUNNING
  }

  /**
   * Forgets a finished task: it is no longer listed, shown or streamed (open streams end with the
   * report they already had). A task without its report stays.
   */
  Forget forget(String id) {
    Task t = tasks.get(id);
    if (t == null) {
      return Forget.UNKNOWN;
    }
    synchronized (t) {
      if (!t.finished()) {
        return Forget.RUNNING;
      }
      forgotten.add(id);
      tasks.remove(id, t);
      return Forget.FORGOTTEN;
    }
  }

  /** Ids of the tasks whose finish this hub learned before {@code cutoff}: retention's harvest. */
  List<String> finishedBefore(java.time.Instant cutoff) {
    return tasks.values().stream()
        .filter(
            t -> {
              synchronized (t) {
                return t.finishedAt.filter(at -> at.isBefore(cutoff)).isPresent();
              }
            })
        .map(t -> t.id)
        .toList();
  }

  /** A task deleted before a restart: dropped, and its id not taken again. */
  void forgotten(String id) {
    forgotten.add(id);
    tasks.remove(id);
  }

  void remove(String id) {
    tasks.remove(id);
  }

  Optional<Task> get(String id) {
    return Optional.ofNullable(tasks.get(id));
  }

  List<Task> all() {
    return List.copyOf(tasks.values());
  }

  /**
   * One journal entry into the book, as if it had happened in this hub (a restart's restore): an
   * assign adds the task, or places it again when it was taken from a dead runner; a cancel the hub
   * sent because the runner was gone past dead-after ({@code E-HUB-008}) takes the task from it,
   * any other cancel marks it requested.
   */
  void replay(io.capsule.hub.store.HubJournal.Entry entry) {
    // The journal keeps each frame as the runner saw it: a later attempt's under its wire id.
    String id = Attempt.taskOf(entry.frame().taskId());
    if (entry.frame() instanceof io.capsule.protocol.frame.TaskAssign a) {
      String backend = a.invocation().backend();
      String capsule = backend.startsWith("capsule:") ? backend.substring(8) : backend;
      if (!add(new Task(id, capsule, entry.runner(), Pending.ownSpec(id, a.task())))) {
        get(id).ifPresent(t -> t.placed(entry.runner()));
      }
      get(id).ifPresent(t -> t.assignedAs(a));
    } else if (entry.frame() instanceof io.capsule.protocol.frame.TaskCancel c) {
      if (io.capsule.hub.placement.Reclaim.isReclaim(c)) {
        get(id).ifPresent(t -> t.takenFrom(entry.runner()));
      } else {
        get(id).ifPresent(Task::markCancelRequested);
      }
    } else if (entry.frame() instanceof TaskProgress p) {
      get(id).ifPresent(t -> t.counted(entry.folded() - 1)); // the run it ends, unread
      progress(p);
    } else if (entry.frame() instanceof TaskReport r) {
      report(r);
    }
  }

  /** An applied progress frame, under its task's own id or its attempt's wire id. */
  void progress(TaskProgress p) {
    Task t = tasks.get(Attempt.taskOf(p.taskId()));
    if (t != null) {
      t.onProgress(Attempt.asTask(p));
    }
  }

  /** The task's report, under its own id or its attempt's wire id. */
  void report(TaskReport r) {
    Task t = tasks.get(Attempt.taskOf(r.taskId()));
    if (t != null) {
      t.onReport(Attempt.asTask(r));
    }
  }
}
