package io.capsule.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The reference hub's memory of its tasks: what was submitted, the progress applied so far (each
 * frame once, in seq order, as the protocol's hub guarantees), and the report. Subscribers of a
 * task get the history from an event id, then every later event, with no gap and no duplicate: the
 * snapshot and the registration happen under the task's lock.
 *
 * <p>Thread-safe: written from the hub's event stream, read from HTTP request threads.
 */
final class TaskBook {

  /** One progress frame or the report, as the events endpoint sends it. */
  record Entry(long id, String event, JsonNode data) {}

  /** A task: immutable facts plus a guarded log. */
  static final class Task {
    final String id;
    final String capsule;
    final RunnerKey runner;
    final ObjectNode spec;
    private final List<Entry> log = new ArrayList<>();
    private final List<Consumer<Entry>> subscribers = new ArrayList<>();
    private Optional<ObjectNode> report = Optional.empty();
    private String state = "assigned";
    private boolean cancelRequested;

    Task(String id, String capsule, RunnerKey runner, ObjectNode spec) {
      this.id = id;
      this.capsule = capsule;
      this.runner = runner;
      this.spec = spec;
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
      n.put("runner", runner.toString());
      n.put("state", state);
      n.put("cancel_requested", cancelRequested);
      n.put("events", log.size());
      return n;
    }

    synchronized boolean finished() {
      return report.isPresent();
    }

    /** What a subscriber gets: the history after its id, and how to stop hearing later ones. */
    record Subscription(List<Entry> history, Runnable cancel) {}

    /**
     * The entries after {@code afterId} and, atomically with that snapshot, a registration of
     * {@code live} for every later entry: no gap, no duplicate.
     */
    synchronized Subscription subscribe(long afterId, Consumer<Entry> live) {
      List<Entry> history = log.stream().filter(e -> e.id() > afterId).toList();
      subscribers.add(live);
      return new Subscription(
          history,
          () -> {
            synchronized (this) {
              subscribers.remove(live);
            }
          });
    }

    private synchronized void append(Entry e) {
      log.add(e);
      for (Consumer<Entry> s : List.copyOf(subscribers)) {
        s.accept(e);
      }
    }

    private synchronized void onProgress(TaskProgress p) {
      if ("state".equals(p.kind()) && p.payload().isTextual()) {
        state = p.payload().asText();
      } else if ("state".equals(p.kind()) && p.payload().has("phase")) {
        state = p.payload().get("phase").asText().toLowerCase(java.util.Locale.ROOT);
      }
      append(new Entry(p.seq(), p.kind(), p.payload()));
    }

    private synchronized void onReport(TaskReport r) {
      report = Optional.of(r.report().json());
      state = r.report().status();
      append(new Entry(r.seq(), "report", r.report().json()));
    }

    synchronized void markCancelRequested() {
      cancelRequested = true;
    }
  }

  private final Map<String, Task> tasks = new ConcurrentHashMap<>();

  /**
   * Ids of tasks this book forgot ({@link #forget}). The hub's sequencing still knows them (their
   * seqs, their runner), so a new task under one of them would collide there: they are not reused.
   */
  private final Set<String> forgotten = ConcurrentHashMap.newKeySet();

  /** Records a submitted task; false when the id is taken. */
  boolean add(Task task) {
    return tasks.putIfAbsent(task.id, task) == null;
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

  void remove(String id) {
    tasks.remove(id);
  }

  Optional<Task> get(String id) {
    return Optional.ofNullable(tasks.get(id));
  }

  List<Task> all() {
    return List.copyOf(tasks.values());
  }

  void progress(TaskProgress p) {
    Task t = tasks.get(p.taskId());
    if (t != null) {
      t.onProgress(p);
    }
  }

  void report(TaskReport r) {
    Task t = tasks.get(r.taskId());
    if (t != null) {
      t.onReport(r);
    }
  }
}
