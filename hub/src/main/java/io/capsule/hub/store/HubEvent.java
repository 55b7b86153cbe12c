package io.capsule.hub.store;

import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;

/**
 * What the hub tells its embedding code, in the order it happened. Progress and reports are applied
 * ones: each exactly once per task and seq, in seq order, however often the runner reconnected and
 * replayed.
 */
public sealed interface HubEvent {

  RunnerKey runner();

  /** A runner said hello on a new connection. */
  record RunnerUp(RunnerKey runner, Hello hello) implements HubEvent {}

  /** A runner's connection ended (it may come back and resume). */
  record RunnerDown(RunnerKey runner, String reason) implements HubEvent {}

  /**
   * An applied progress frame, under the task's own id (a later attempt's frame came with its wire
   * id: see {@link io.capsule.hub.placement.Attempt}).
   */
  record Progress(RunnerKey runner, TaskProgress progress) implements HubEvent {}

  /** The task's report, under the task's own id: the task is finished on the hub. */
  record Report(RunnerKey runner, TaskReport report) implements HubEvent {}

  /**
   * The runner was gone longer than {@code dead-after}: these unfinished tasks were taken from it
   * ({@code E-HUB-008}) to be placed again. By the wire ids of the attempts taken ({@link
   * io.capsule.hub.placement.Attempt}), so that a late or repeated notice of an attempt the task
   * has moved past takes nothing.
   */
  record Reclaimed(RunnerKey runner, java.util.List<String> taskIds) implements HubEvent {
    public Reclaimed {
      taskIds = java.util.List.copyOf(taskIds);
    }
  }

  /** A frame or a connection was refused (bad frame, project mismatch, no hello). */
  record Refused(RunnerKey runner, Diagnostic diagnostic) implements HubEvent {}
}
