package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The name of a run's cgroup directory: {@code run-<pid>-<start>-<seq>-<run id>}, where pid and
 * start identify the JVM that made it (its pid and its start time in clock ticks since boot, field
 * 22 of {@code /proc/<pid>/stat}), so a pid reused by another process is never taken for the owner.
 * A directory whose owner is gone is a leftover of a JVM that died without closing it; only such
 * directories are swept. Pure except {@link #startTime}.
 *
 * @param pid the owning JVM's pid
 * @param start the owning JVM's start time
 * @param seq a per-JVM sequence number (run ids may repeat)
 * @param runId the run id, sanitised to {@code [A-Za-z0-9_.-]} and at most 40 characters
 */
record RunCgroupName(long pid, long start, long seq, String runId) {

  private static final Pattern SHAPE = Pattern.compile("run-(\\d+)-(\\d+)-(\\d+)-(.*)");

  /** A name for {@code runId} made by the JVM {@code pid}/{@code start}. */
  static RunCgroupName of(long pid, long start, long seq, String runId) {
    String clean = runId.replaceAll("[^A-Za-z0-9_.-]", "_");
    return new RunCgroupName(pid, start, seq, clean.substring(0, Math.min(40, clean.length())));
  }

  /** The directory name. */
  String dir() {
    return "run-" + pid + "-" + start + "-" + seq + "-" + runId;
  }

  /** The name a directory carries, if it is a run cgroup's. */
  static Optional<RunCgroupName> parse(String dir) {
    Matcher m = SHAPE.matcher(dir);
    if (!m.matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          new RunCgroupName(
              Long.parseLong(m.group(1)),
              Long.parseLong(m.group(2)),
              Long.parseLong(m.group(3)),
              m.group(4)));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether the JVM that made this name is gone, given the start time of the process now holding
   * its pid (empty when no process does).
   */
  boolean ownerGone(OptionalLong startOfPid) {
    return startOfPid.isEmpty() || startOfPid.getAsLong() != start;
  }

  /** Field 22 (starttime) of {@code /proc/<pid>/stat}; empty when there is no such process. */
  static OptionalLong startTime(long pid) {
    try {
      String stat =
          Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
      return startTimeOf(stat);
    } catch (IOException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * The starttime field of a {@code /proc/<pid>/stat} text. The command name (field 2) may hold
   * spaces and parentheses, so fields are counted after its last {@code ')'}: starttime is the 20th
   * of them.
   */
  static OptionalLong startTimeOf(String stat) {
    int close = stat.lastIndexOf(')');
    if (close < 0) {
      return OptionalLong.empty();
    }
    String[] fields = stat.substring(close + 1).strip().split("\\s+");
    if (fields.length < 20) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(fields[19]));
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }
}
