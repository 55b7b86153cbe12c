package io.capsule.runtime.metrics;

import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.javadsl.RunOutcome;
import java.nio.file.Path;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One INFO line per step of a run, for a runner's operator: the run started (with its capsule), the
 * harness spawned (with its pid), a turn ended (with how), the run finished (with its outcome and
 * failure code). Nothing per event or per frame at INFO.
 *
 * <p>What is never logged: the task's goal, what the harness or the model said, arguments or
 * environment of the harness (they may hold a prompt or a key). Ids, capsule names, pids, codes and
 * counts only.
 *
 * <p>Threading: stateless; called from each run's actor.
 */
public final class RunLog {
  private static final Logger LOG = LoggerFactory.getLogger("io.capsule.runtime.runs");

  private RunLog() {}

  public static void started(String taskId, CapsuleRef capsule) {
    LOG.info("run {} started (capsule {})", taskId, name(capsule));
  }

  /** A folder capsule by its folder's name (as the hub names it), a registered one by its name. */
  static String name(CapsuleRef ref) {
    if (ref instanceof CapsuleRef.Folder f) {
      Path file = Path.of(f.path()).getFileName();
      return file == null ? f.path() : file.toString();
    }
    return ref instanceof CapsuleRef.Registered r ? r.name() : ref.key();
  }

  public static void spawned(String taskId, long pid) {
    LOG.info("run {}: harness spawned (pid {})", taskId, pid);
  }

  /**
   * @param terminal the driver's terminal event: {@code turn-end}, or {@code turn-failed} (said)
   */
  public static void turnEnded(String taskId, String terminal) {
    LOG.info(
        "run {}: turn ended{}", taskId, "turn-end".equals(terminal) ? "" : " (" + terminal + ")");
  }

  public static void finished(RunOutcome o) {
    LOG.info(
        "run {} finished: {}{} after {} {}, {} s",
        o.taskId(),
        o.status().wire(),
        o.failureType().map(f -> " (" + f + ")").orElse(""),
        o.turns(),
        o.turns() == 1 ? "turn" : "turns",
        String.format(Locale.ROOT, "%.1f", o.duration().toMillis() / 1000.0));
  }
}
