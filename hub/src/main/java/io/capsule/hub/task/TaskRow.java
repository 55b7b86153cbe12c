package io.capsule.hub.task;

import java.util.List;

/**
 * One event of a task entity's journal, one row of the store: a single frame ({@link TaskEvent}) or
 * the frames of the task that one write recorded together ({@link TaskEvents}). Readers take {@link
 * #events()} in order; a frame's place among the task's events is its seq, never its row.
 */
public sealed interface TaskRow permits TaskEvent, TaskEvents {
  /** The frames this row holds, in the order they were recorded. */
  List<TaskEvent> events();
}
