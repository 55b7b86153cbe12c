package io.capsule.hub;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.hub.placement.Waiting;
import io.capsule.hub.queue.QueueEvent;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskSpec;
import java.io.IOException;
import java.util.Optional;

/**
 * A task waiting in the project's queue ({@link TaskQueue}) with everything its assignment needs:
 * submitted through the API, restored from the queue's store, or taken back from a runner gone past
 * {@code dead-after} (then built from the assignment it had).
 */
record Pending(
    TaskSpec spec,
    String capsule,
    Optional<String> runner,
    String role,
    Invocation invocation,
    TaskBook.Task task) {

  /**
   * The task's own id; {@link #spec}'s is the id the runner sees for this attempt ({@link
   * io.capsule.hub.placement.Attempt}), the same but for a task taken back.
   */
  String taskId() {
    return task.id;
  }

  /** What placement sees, under the task's own id, with the runners it was taken from. */
  Waiting waiting() {
    Waiting w =
        runner
            .map(r -> Waiting.on(taskId(), capsule, r))
            .orElseGet(() -> Waiting.any(taskId(), capsule));
    for (String dead : task.gaveUp()) {
      w = w.takenFrom(dead);
    }
    return w;
  }

  /**
   * The refusal ({@code E-PRO-005}) when this task's assignment would be above {@code frameCap}
   * under its longest wire id ({@link io.capsule.hub.placement.Attempt#longest}): it fits a runner
   * as its first attempt, maybe, but would end {@code too_large} the first time it is placed again,
   * after it ran. Empty when every attempt fits. An assignment is its wire id's first frame: seq 1.
   */
  Optional<io.capsule.config.diag.Diagnostic> aboveFrameCap(int frameCap) {
    com.fasterxml.jackson.databind.node.ObjectNode longest = spec.json(); // a copy
    String wireId = io.capsule.hub.placement.Attempt.longest(taskId());
    longest.put("id", wireId);
    TaskAssign a = new TaskAssign(TaskSpec.wrap(longest), role, invocation);
    int bytes = io.capsule.protocol.codec.FrameCodec.shared().encode(a.withSeq(1)).length;
    if (bytes <= frameCap) {
      return Optional.empty();
    }
    return Optional.of(
        io.capsule.config.diag.Diagnostic.of(
            io.capsule.config.diag.Code.E_PRO_005,
            "task "
                + taskId()
                + ": its task.assign would be "
                + bytes
                + " bytes under its longest attempt id ("
                + wireId.length()
                + " characters, as a runner sees it when the task is placed again after its"
                + " runner was gone past dead-after), above the runners' frame cap of "
                + frameCap
                + " bytes; shorten the goal or body"));
  }

  /**
   * A task taken back from a dead runner: its spec, role and invocation as it was assigned, the
   * spec under the next attempt's wire id (whichever runner it lands on, none has seen that id). It
   * no longer names a runner (it named the one that died, or none).
   */
  static Pending reclaimed(TaskAssign a, TaskBook.Task task) {
    com.fasterxml.jackson.databind.node.ObjectNode next = a.task().json(); // a copy
    next.put("id", io.capsule.hub.placement.Attempt.next(a.taskId()));
    return new Pending(
        TaskSpec.wrap(next), task.capsule, Optional.empty(), a.role(), a.invocation(), task);
  }

  /**
   * The {@code QUEUED} event that keeps this task in the queue's store (the spec as it is sent).
   */
  QueueEvent queued() {
    return QueueEvent.queued(
        taskId(),
        capsule,
        runner.orElse(""),
        role,
        spec.json().toString(),
        invocation.json().toString());
  }

  /** The task a {@code QUEUED} event kept. */
  static Pending of(QueueEvent e) {
    try {
      ObjectMapper json = new ObjectMapper();
      TaskSpec spec = TaskSpec.of(json.readTree(e.spec()));
      Invocation invocation = Invocation.of(json.readTree(e.invocation()));
      return new Pending(
          spec,
          e.capsule(),
          Optional.of(e.runner()).filter(r -> !r.isEmpty()),
          e.role(),
          invocation,
          TaskBook.Task.queued(
              e.taskId(), e.capsule(), ownSpec(e.taskId(), spec), "queued before the restart"));
    } catch (IOException | DiagnosticException bad) {
      throw new IllegalStateException("the store holds a queued task the hub cannot read", bad);
    }
  }

  /** The spec under the task's own id, as the API shows it (the runner's may be an attempt's). */
  static com.fasterxml.jackson.databind.node.ObjectNode ownSpec(String taskId, TaskSpec spec) {
    com.fasterxml.jackson.databind.node.ObjectNode own = spec.json(); // a copy
    own.put("id", taskId);
    return own;
  }
}
