package io.capsule.runtime.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Signals and inspects a process group (a harness's, a probe's, a tool call's). Java has no API to
 * signal a group (or to send SIGINT at all), so signals are a {@code kill(2)} system call with a
 * negative pid ({@link Posix}); membership is read from {@code /proc/<pid>/stat}.
 *
 * <p>Every method but {@link #signal} blocks (a wait, or reads {@code /proc}): call them on a
 * blocking dispatcher, never on an actor's thread. {@link #signal} is one {@code kill(2)}, which
 * queues the signal and returns at once: a harness actor makes it itself when its leader has exited
 * ({@link GroupSignals#goneAfterExit}).
 */
public final class ProcessGroup {

  /** {@code setsid(1)} starts the harness as the leader of a new session and process group. */
  static final Path SETSID = firstExisting("/usr/bin/setsid", "/bin/setsid");

  private ProcessGroup() {}

  /**
   * Sends a signal ({@code INT}, {@code TERM} or {@code KILL}) to every process of the group, by a
   * system call: no helper process per signal (a cancel of 1,000 runs spawns none).
   *
   * @return whether any process got it (false when the group is gone)
   */
  public static boolean signal(long pgid, String signal) {
    int number =
        switch (signal) {
          case "INT" -> Posix.SIGINT;
          case "TERM" -> Posix.SIGTERM;
          case "KILL" -> Posix.SIGKILL;
          default -> throw new IllegalArgumentException("not a signal of ours: " + signal);
        };
    return Posix.signalGroup(pgid, number);
  }

  /**
   * Kills the whole group with SIGKILL, and the leader and its descendants through the JDK too: the
   * group signal misses nothing that stayed in the group (also children whose parent is gone); the
   * JDK calls cover the moment before {@code setsid} has made the group. When the group did not
   * exist yet, it is signalled once more after the leader is dead: anything the leader forked after
   * its {@code setsid} is in the group by then. Then waits (bounded) until every member has died.
   * Used for harnesses, version probes and login checks, and the bridge's tool calls alike.
   *
   * <p>The common end of a run is a leader that has exited (and been reaped) and left nothing
   * behind. One {@code kill(2)} tells: a group with no process left, not even a zombie, answers
   * {@code ESRCH}, and an empty group gains no member (joining one needs a member to be there), so
   * then nothing is scanned in {@code /proc} and nothing is awaited: the run's end does not wait
   * for two scans of every process on the machine. An exited leader's descendants are not found
   * through it any more (they were reparented); whatever stayed in the group, the group signal
   * finds. (A group whose every member refuses the signal, {@code EPERM}, is let go the same way:
   * no kill of ours could end it, and before, the bounded wait only delayed the report.)
   *
   * @return false when the leader had exited and its group was already empty (nothing was killed or
   *     awaited); true when the kill and the wait ran
   */
  public static boolean killAll(long pgid, ProcessHandle leader) {
    if (!leader.isAlive() && !signal(pgid, "KILL")) {
      return false;
    }
    List<ProcessHandle> descendants = leader.descendants().toList();
    boolean groupExisted = signal(pgid, "KILL");
    leader.destroyForcibly();
    descendants.forEach(ProcessHandle::destroyForcibly);
    if (!groupExisted) {
      signal(pgid, "KILL");
    }
    awaitGone(pgid, KILL_SETTLE);
    return true;
  }

  /**
   * How long {@link #killAll} waits for the kill to take effect. {@code kill(2)} returns once
   * SIGKILL is queued, not once the target is dead: a member that was running on another core or
   * sleeping uninterruptibly on I/O is still alive for a moment (seen under load as a member
   * outliving the run's report by a few milliseconds). Dying takes microseconds normally; two
   * seconds bounds a member stuck in the kernel, after which the report goes out anyway.
   */
  static final Duration KILL_SETTLE = Duration.ofSeconds(2);

  /**
   * Returns once no live (non-zombie) process is in the group, or after {@code bound}. The members
   * are read from {@code /proc} once; then the kernel tells when each one dies ({@link
   * Posix#awaitExit}), so nothing reads {@code /proc} in a loop. Meant for a group already killed:
   * a killed group gains no members (fork fails with a fatal signal pending).
   *
   * @return whether the group is gone
   */
  static boolean awaitGone(long pgid, Duration bound) {
    List<Long> members = liveMembers(pgid);
    return members.isEmpty() || Posix.awaitExit(members, bound);
  }

  /** Pids of the group's live members (zombies are dead and not counted). */
  public static List<Long> liveMembers(long pgid) {
    List<Long> members = new ArrayList<>();
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path proc : procs) {
        OptionalLong group = liveGroupOf(proc);
        if (group.isPresent() && group.getAsLong() == pgid) {
          members.add(Long.parseLong(proc.getFileName().toString()));
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot read /proc", e);
    }
    return members;
  }

  /** The process group of a live process, from {@code /proc/<pid>/stat}; empty for a zombie. */
  static OptionalLong liveGroupOf(Path procDir) {
    String stat;
    try {
      stat = Files.readString(procDir.resolve("stat"), StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return OptionalLong.empty(); // it ended while we looked
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read after the
    // last ')'.
    String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    if (rest[0].equals("Z") || rest[0].equals("X")) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(Long.parseLong(rest[2]));
  }

  private static Path firstExisting(String... candidates) {
    for (String candidate : candidates) {
      Path path = Path.of(candidate);
      if (Files.isExecutable(path)) {
        return path;
      }
    }
    return Path.of(candidates[0]);
  }
}
