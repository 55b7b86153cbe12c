package io.capsule.hub.events;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.placement.Attempt;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.task.TaskEvent;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import java.util.Objects;
import java.util.Optional;

/**
 * One event of a task as its events endpoint sends it: an applied progress frame ({@code id} = the
 * runner's seq, plus the placement's offset when the task was placed again: see {@link EventIds};
 * {@code event} = its kind, {@code data} = its payload) or the report ({@code event} = {@code
 * report}), which ends the stream.
 */
public record TaskEntry(long id, String event, JsonNode data) {
  private static final FrameCodec CODEC = FrameCodec.shared();

  public TaskEntry {
    Objects.requireNonNull(event, "event");
    Objects.requireNonNull(data, "data");
  }

  /** This entry with its id moved past {@code offset} (a later placement's events). */
  public TaskEntry after(long offset) {
    return offset == 0 ? this : new TaskEntry(id + offset, event, data);
  }

  public boolean isReport() {
    return "report".equals(event);
  }

  public static TaskEntry of(TaskProgress p) {
    return new TaskEntry(p.seq(), p.kind(), p.payload());
  }

  /** The report event, its {@code task_id} the task's own (not a later attempt's wire id). */
  public static TaskEntry of(TaskReport r) {
    return new TaskEntry(r.seq(), "report", Attempt.asTask(r).report().json());
  }

  /**
   * The entry a task entity's journal event stands for: applied progress and reports have one;
   * frames the hub sent (assign, cancel) have none.
   */
  public static Optional<TaskEntry> of(TaskEvent e) {
    if (e.direction() != HubJournal.Direction.APPLIED) {
      return Optional.empty();
    }
    Frame f = CODEC.decode(e.frame(), false);
    if (f instanceof TaskProgress p) {
      return Optional.of(of(p));
    }
    if (f instanceof TaskReport r) {
      return Optional.of(of(r));
    }
    return Optional.empty();
  }
}
