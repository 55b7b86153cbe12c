package io.capsule.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Where a hub cluster's failover spends its time, read from the processes' logs (stamped {@code
 * HH:mm:ss.SSS} by logback) after a kill: each phase is the first log line matching its pattern
 * after the kill, or (for phases every runner must pass) the last runner's first line, plus what
 * the test measured itself. {@link #print} lists them in time order with the step from the phase
 * before, so a slow run says which step was slow.
 *
 * <p>Times from log stamps and from the test's clock differ by the log's millisecond stamp and the
 * process's buffering: a few ms, far below the phases measured here.
 */
final class FailoverTimeline {
  /** A phase and when it happened, in ms after the kill; {@code where} names whose log said so. */
  record Phase(String name, long ms, String where) {}

  private static final Pattern STAMP = Pattern.compile("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} .*");

  private final LocalTime killedAt;
  private final List<Phase> phases = new ArrayList<>();

  FailoverTimeline(LocalTime killedAt) {
    this.killedAt = killedAt;
  }

  /**
   * Adds the phase {@code name} at the earliest line after the kill matching {@code pattern} in any
   * of {@code logs}; nothing when no log has one (the timeline says "not seen").
   */
  void firstOf(String name, String pattern, List<Path> logs) throws IOException {
    Phase best = null;
    for (Path log : logs) {
      OptionalLong ms = firstAfterKill(log, Pattern.compile(pattern));
      if (ms.isPresent() && (best == null || ms.getAsLong() < best.ms())) {
        best = new Phase(name, ms.getAsLong(), log.getFileName().toString());
      }
    }
    phases.add(best != null ? best : new Phase(name, -1, "not seen"));
  }

  /**
   * Adds the phase {@code name} when every one of {@code logs} has had a line matching {@code
   * pattern} after the kill: the latest of their first such lines.
   */
  void lastOf(String name, String pattern, List<Path> logs) throws IOException {
    Phase worst = null;
    for (Path log : logs) {
      OptionalLong ms = firstAfterKill(log, Pattern.compile(pattern));
      if (ms.isEmpty()) {
        phases.add(new Phase(name, -1, "not seen in " + log.getFileName()));
        return;
      }
      if (worst == null || ms.getAsLong() > worst.ms()) {
        worst = new Phase(name, ms.getAsLong(), log.getFileName().toString());
      }
    }
    if (worst != null) {
      phases.add(worst);
    }
  }

  /** Adds a phase the test measured on its own clock. */
  void measured(String name, long ms) {
    phases.add(new Phase(name, ms, "test"));
  }

  List<Phase> phases() {
    return List.copyOf(phases);
  }

  /** Prints the phases seen, in time order, each with its step from the one before. */
  void print() {
    List<Phase> seen =
        phases.stream()
            .filter(p -> p.ms() >= 0)
            .sorted(Comparator.comparingLong(Phase::ms))
            .toList();
    long before = 0;
    for (Phase p : seen) {
      System.out.printf(
          "failover +%6d ms (step %+6d ms) %s [%s]%n",
          p.ms(), p.ms() - before, p.name(), p.where());
      before = p.ms();
    }
    phases.stream()
        .filter(p -> p.ms() < 0)
        .forEach(p -> System.out.printf("failover: %s %s%n", p.name(), p.where()));
  }

  /**
   * How close the run came to a false positive: Pekko warns when a node's heartbeat went out at
   * least two intervals late (a starved or paused JVM); a node is downed while alive only when its
   * heartbeats stop for about heartbeat-pause + stable-after. Prints how many such warnings all of
   * {@code logs} hold, the longest gap, and any node marked unreachable before the kill.
   */
  static void printHeartbeatHealth(List<Path> logs, LocalTime killedAt) throws IOException {
    Pattern late =
        Pattern.compile("heartbeat was delayed\\. Previous heartbeat was sent \\[(\\d+)\\]");
    int count = 0;
    long longest = 0;
    int falseUnreachable = 0;
    for (Path log : logs) {
      if (!Files.exists(log)) {
        continue;
      }
      for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
        java.util.regex.Matcher m = late.matcher(line);
        if (m.find()) {
          count++;
          longest = Math.max(longest, Long.parseLong(m.group(1)));
        }
        if (STAMP.matcher(line).matches()
            && line.contains("Marking node as UNREACHABLE")
            && LocalTime.parse(line.substring(0, 12)).isBefore(killedAt)) {
          falseUnreachable++;
        }
      }
    }
    System.out.printf(
        "heartbeats sent late (>= 2 intervals) on the hub nodes: %d, longest gap %d ms; nodes"
            + " marked unreachable before the kill: %d%n",
        count, longest, falseUnreachable);
  }

  private OptionalLong firstAfterKill(Path log, Pattern pattern) throws IOException {
    if (!Files.exists(log)) {
      return OptionalLong.empty();
    }
    for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
      if (!STAMP.matcher(line).matches()) {
        continue;
      }
      long ms = Duration.between(killedAt, LocalTime.parse(line.substring(0, 12))).toMillis();
      if (ms >= 0 && pattern.matcher(line).find()) {
        return OptionalLong.of(ms);
      }
    }
    return OptionalLong.empty();
  }
}
