package io.capsule.hub.runner;

import io.capsule.hub.placement.Reclaim;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.frame.TaskCancel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.Logger;

/**
 * What the brain ({@link HubCore}) does to a runner whose connection has been gone longer than
 * {@code dead-after}: it takes the runner's unfinished tasks back so the queue places them again.
 * For each task it numbers the {@link Reclaim} cancel to the dead runner, which the brain journals
 * before the task's new assignment: the runner hears it when it resumes, and a restarted hub reads
 * from it that the task was taken back ({@link HubRestore#taken}). Touched by the brain's actor
 * only.
 */
final class RunnerDeath {
  private RunnerDeath() {}

  /**
   * One task taken back, with the cancel to journal; none when the runner's replay buffer is full
   * (its frames for the task are refused all the same once the task is placed elsewhere).
   */
  record Taken(String taskId, Optional<BrainSession.Numbered<TaskCancel>> cancel) {}

  /** The runner's connection has been gone for dead-after: take its tasks back. */
  record DeadAfter(RunnerKey key) implements HubCore.Command {}

  /** The timer key of a runner's death watch. */
  static String timer(RunnerKey key) {
    return "dead-" + HubRestore.owned(key.projectId(), key.runnerId());
  }

  /**
   * A runner without a connection and with open tasks: unless a watch runs already, {@link
   * DeadAfter} comes in {@code deadAfter} (a hello cancels it, see {@link #timer}).
   */
  static void watch(
      TimerScheduler<HubCore.Command> timers, RunnerKey key, BrainSession s, Duration deadAfter) {
    if (s.conn == null && !s.openTasks.isEmpty() && !timers.isTimerActive(timer(key))) {
      timers.startSingleTimer(timer(key), new DeadAfter(key), deadAfter);
    }
  }

  /**
   * Takes every open task from {@code s}, the session of {@code key}: numbers its cancel, removes
   * it from the open tasks and the owner map. In the order the tasks were assigned.
   */
  static List<Taken> takeBack(
      RunnerKey key,
      BrainSession s,
      Map<String, RunnerKey> taskOwner,
      ProtocolConfig config,
      Logger log) {
    List<Taken> taken = new ArrayList<>();
    for (String task : List.copyOf(s.openTasks)) {
      Optional<BrainSession.Numbered<TaskCancel>> cancel;
      try {
        cancel =
            Optional.of(
                s.number(
                    key,
                    Reclaim.cancel(task, key.runnerId(), config.deadAfter()),
                    config.frameCapBytes()));
      } catch (ProtocolException e) {
        log.warn("{}: the cancel of {} was not buffered: {}", key, task, e.diagnostic().render());
        cancel = Optional.empty();
      }
      s.openTasks.remove(task);
      taskOwner.remove(HubRestore.owned(key.projectId(), task));
      taken.add(new Taken(task, cancel));
    }
    log.warn(
        "{}: gone longer than dead-after ({}), tasks taken back to be placed again: {}",
        key,
        config.deadAfter(),
        taken.stream().map(Taken::taskId).toList());
    return taken;
  }
}
