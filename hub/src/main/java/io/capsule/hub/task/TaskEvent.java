package io.capsule.hub.task;

import io.capsule.hub.HubCbor;
import io.capsule.hub.store.HubJournal.Direction;
import java.util.List;
import java.util.Objects;

/**
 * One frame of a task's history, as its entity persists it (alone, or with others of one write in
 * {@link TaskEvents}): one frame the hub sent for the task ({@code task.assign}, {@code
 * task.cancel}) or one runner frame it applied ({@code task.progress}, {@code task.report}), with
 * the runner it went to or came from. The frame is kept as the protocol's own JSON text so that
 * fields this hub does not know survive the store, as they survive the wire.
 */
public record TaskEvent(
    String projectId, String runnerId, Direction direction, String type, long seq, String frame)
    implements HubCbor, TaskRow {
  public TaskEvent {
    Objects.requireNonNull(projectId, "projectId");
    Objects.requireNonNull(runnerId, "runnerId");
    Objects.requireNonNull(direction, "direction");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(frame, "frame");
  }

  @Override
  public List<TaskEvent> events() {
    return List.of(this);
  }

  boolean isAssign() {
    return direction == Direction.SENT && "task.assign".equals(type);
  }

  boolean isReport() {
    return direction == Direction.APPLIED && "task.report".equals(type);
  }
}
