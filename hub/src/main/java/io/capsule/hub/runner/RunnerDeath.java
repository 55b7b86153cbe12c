package io.capsule.hub.runner;

import io.capsule.hub.placement.Reclaim;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * What the brain ({@link HubCore}) does when a runner's connection has been gone longer than {@code
 * dead-after}: it takes the runner's unfinished tasks back so the queue places them again. It keeps
 * the assignment each open task got (a task placed again is assigned as it was), and for each task
 * it takes back it journals and buffers the {@link Reclaim} cancel to the dead runner first: the
 * runner hears it when it resumes, and a restarted hub reads from it that the task was taken back
 * ({@link HubRestore#taken}). Touched by the brain's actor only.
 */
final class RunnerDeath {
  private final Map<String, TaskAssign> assigns; // key: HubRestore.owned(project, task)

  RunnerDeath(Map<String, TaskAssign> restored) {
    this.assigns = new HashMap<>(restored);
  }

  /** The timer key of a runner's death watch. */
  static String timer(RunnerKey key) {
    return "dead-" + HubRestore.owned(key.projectId(), key.runnerId());
  }

  void assigned(RunnerKey key, TaskAssign a) {
    assigns.put(HubRestore.owned(key.projectId(), a.taskId()), a);
  }

  void finished(RunnerKey key, String taskId) {
    assigns.remove(HubRestore.owned(key.projectId(), taskId));
  }

  /**
   * Takes every open task from {@code s}, the session of {@code key}, gone past dead-after: the
   * cancel is journaled and buffered for the runner, then the task leaves its open tasks and the
   * owner map. Returns the assignments taken back, in the order they were assigned; empty when the
   * journal failed (the caller halts: nothing after the failed write was changed). A cancel the
   * runner's full replay buffer refuses is skipped (logged): its frames for the task are refused
   * all the same once the task is placed elsewhere.
   */
  Optional<List<TaskAssign>> reclaim(
      RunnerKey key,
      BrainSession s,
      Map<String, RunnerKey> taskOwner,
      ProtocolConfig config,
      BrainJournal journal,
      Logger log) {
    List<TaskAssign> taken = new ArrayList<>();
    for (String task : List.copyOf(s.openTasks)) {
      String owned = HubRestore.owned(key.projectId(), task);
      TaskCancel cancel = Reclaim.cancel(task, key.runnerId(), config.deadAfter());
      try {
        if (s.send(key, cancel, config.frameCapBytes(), journal).isEmpty()) {
          return Optional.empty();
        }
      } catch (ProtocolException e) {
        log.warn("{}: the cancel of {} was not buffered: {}", key, task, e.diagnostic());
      }
      s.openTasks.remove(task);
      taskOwner.remove(owned);
      TaskAssign a = assigns.remove(owned);
      if (a != null) {
        taken.add(a);
      }
    }
    return Optional.of(taken);
  }
}
