package io.capsule.hub.placement;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import java.util.Objects;

/**
 * The task id a runner sees for each run of a task: its <em>wire id</em>. The protocol numbers
 * frames per runner and task id, and a runner remembers a task it was told to cancel, so a task
 * taken from a runner gone past {@code dead-after} cannot run there again under its own id. Each
 * placement after a take-back is therefore a new attempt under a new wire id, {@code
 * <task>~attempt-<n>} (the first run keeps the task's own id): on every runner, the one it was
 * taken from as well as any other, so the rule does not depend on where it lands.
 *
 * <p>The mapping is a pure function both ways, so everything the hub rebuilds from its journal
 * (after a restart, or when the brain moves to another node) finds the same task for each frame:
 * nothing about attempts is kept beside the frames themselves. It is a bijection because a
 * submitted id may not end the way a wire id does ({@link #isReserved}, refused at {@code POST
 * /v1/tasks}).
 *
 * <p>The suffix takes a wire id past the API's 200 characters (a 200-character id's second attempt
 * is 210, its longest {@link #longest} 218), and every place a wire id reaches takes that: the
 * API's limit is for the URL path segment and headers, and a wire id is in neither (the API and SSE
 * speak of the task's own id; SSE event ids are numbers); the protocol's task schema sets no
 * length; the hub's stores key a task by its own id; the runner names a run's directory (its trace,
 * its files) after the id made file-safe and cut to 64 characters, and names nothing else after it.
 * What a wire id does add to is each frame's size, so a task is refused at {@code POST /v1/tasks}
 * (413, {@code E-PRO-005}) when its assignment would be above the frame cap under its longest wire
 * id, rather than ending {@code too_large} the first time it is placed again. {@code
 * LongTaskIdReplacementTest} (runtime-actors) runs a 200-character id's second attempt end to end
 * on a real runner.
 *
 * <p>A late frame of an earlier attempt carries that attempt's wire id, which no runner owns any
 * more: it is refused ({@code E-PRO-011}), nothing applied.
 */
public final class Attempt {
  /** What separates a task's id from its attempt number in a wire id. */
  public static final String MARK = "~attempt-";

  private Attempt() {}

  /** The wire id of attempt {@code n} (from 1) of {@code taskId}. */
  public static String wireId(String taskId, int n) {
    Objects.requireNonNull(taskId, "taskId");
    if (n < 1) {
      throw new IllegalArgumentException("attempts count from 1, not " + n);
    }
    return n == 1 ? taskId : taskId + MARK + n;
  }

  /**
   * The longest wire id {@code taskId} can have: the most digits an attempt number has ({@link
   * #taskOf} reads at most 9). What a frame's size is checked against when the task is submitted.
   */
  public static String longest(String taskId) {
    return taskId + MARK + "999999999";
  }

  /** The task a wire id (or a task id) stands for. */
  public static String taskOf(String wireId) {
    int at = mark(wireId);
    return at < 0 ? wireId : wireId.substring(0, at);
  }

  /** The attempt a wire id stands for: 1 for a task's own id. */
  public static int numberOf(String wireId) {
    int at = mark(wireId);
    return at < 0 ? 1 : Integer.parseInt(wireId.substring(at + MARK.length()));
  }

  /** The wire id of the attempt after {@code wireId}'s. */
  public static String next(String wireId) {
    return wireId(taskOf(wireId), numberOf(wireId) + 1);
  }

  /**
   * True when a submitted task id ends like a wire id ({@code ~attempt-} and digits): it would be
   * read as an attempt of another task, so it is refused.
   */
  public static boolean isReserved(String taskId) {
    int at = taskId.lastIndexOf(MARK);
    if (at < 0) {
      return false;
    }
    String digits = taskId.substring(at + MARK.length());
    return !digits.isEmpty() && digits.chars().allMatch(c -> c >= '0' && c <= '9');
  }

  /**
   * The frame as the task's own: its task id, not its attempt's (what the hub's events, its book
   * and its meters speak of). The frame itself when it is the first attempt's.
   */
  public static TaskProgress asTask(TaskProgress p) {
    String own = taskOf(p.taskId());
    return own.equals(p.taskId())
        ? p
        : new TaskProgress(own, p.seq(), p.kind(), p.payload(), p.extra());
  }

  /** The report as the task's own: its {@code task_id} is the task's, not its attempt's. */
  public static TaskReport asTask(TaskReport r) {
    String own = taskOf(r.taskId());
    if (own.equals(r.taskId())) {
      return r;
    }
    ObjectNode body = r.report().json(); // a copy
    body.put("task_id", own);
    return new TaskReport(TaskReportBody.wrap(body), r.seq(), r.extra());
  }

  /** Where the mark of a wire id made by {@link #wireId} starts, or -1. */
  private static int mark(String wireId) {
    int at = wireId.lastIndexOf(MARK);
    if (at <= 0) {
      return -1;
    }
    String digits = wireId.substring(at + MARK.length());
    if (digits.isEmpty() || digits.length() > 9 || digits.charAt(0) == '0') {
      return -1;
    }
    for (int i = 0; i < digits.length(); i++) {
      if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
        return -1;
      }
    }
    return Integer.parseInt(digits) >= 2 ? at : -1;
  }
}
