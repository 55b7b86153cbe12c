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

  /** What placement sees: a task taken back is not placed on a runner it was taken from. */
  Waiting waiting() {
    Waiting w =
        runner
            .map(r -> Waiting.on(spec.id(), capsule, r))
            .orElseGet(() -> Waiting.any(spec.id(), capsule));
    for (String dead : task.gaveUp()) {
      w = w.takenFrom(dead);
    }
    return w;
  }

  /**
   * A task taken back from a dead runner: its spec, role and invocation as it was assigned. It no
   * longer names a runner (it named the one that died, or none).
   */
  static Pending reclaimed(TaskAssign a, TaskBook.Task task) {
    return new Pending(a.task(), task.capsule, Optional.empty(), a.role(), a.invocation(), task);
  }

  /** The {@code QUEUED} event that keeps this task in the queue's store. */
  QueueEvent queued() {
    return QueueEvent.queued(
        spec.id(),
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
          TaskBook.Task.queued(e.taskId(), e.capsule(), spec.json(), "queued before the restart"));
    } catch (IOException | DiagnosticException bad) {
      throw new IllegalStateException("the store holds a queued task the hub cannot read", bad);
    }
  }
}
