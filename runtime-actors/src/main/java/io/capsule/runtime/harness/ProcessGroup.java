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
import java.util.concurrent.locks.LockSupport;

/**
 * Signals and inspects a harness's process group. Java has no API to signal a group (or to send
 * SIGINT at all), so signals go through {@code kill(1)} with a negative pid; membership is read
 * from {@code /proc/<pid>/stat}.
 *
 * <p>Every method blocks (it starts a process or reads {@code /proc}): call them on a blocking
 * dispatcher, never on an actor's thread.
 */
public final class ProcessGroup {

  /** {@code setsid(1)} starts the harness as the leader of a new session and process group. */
  static final Path SETSID = firstExisting("/usr/bin/setsid", "/bin/setsid");

  private static final Path KILL = firstExisting("/bin/kill", "/usr/bin/kill");

  private ProcessGroup() {}

  /**
   * Sends a signal ({@code INT}, {@code KILL}, …) to every process of the group.
   *
   * @return whether {@code kill(1)} reported success (false when the group is gone)
   */
  public static boolean signal(long pgid, String signal) {
    if (pgid <= 1) {
      throw new IllegalArgumentException("refusing to signal process group " + pgid);
    }
    try {
      Process kill =
          new ProcessBuilder(KILL.toString(), "-s", signal, "--", "-" + pgid)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      kill.getOutputStream().close();
      return kill.waitFor() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Kills the whole group with SIGKILL, and the leader and its descendants through the JDK too: the
   * group signal misses nothing that stayed in the group (also children whose parent is gone); the
   * JDK calls cover the moment before {@code setsid} has made the group. When the group did not
   * exist yet, it is signalled once more after the leader is dead: anything the leader forked after
   * its {@code setsid} is in the group by then.
   */
  public static void killAll(long pgid, ProcessHandle leader) {
    List<ProcessHandle> descendants = leader.descendants().toList();
    boolean groupExisted = signal(pgid, "KILL");
    leader.destroyForcibly();
    descendants.forEach(ProcessHandle::destroyForcibly);
    if (!groupExisted) {
      signal(pgid, "KILL");
    }
    awaitGone(pgid, KILL_SETTLE);
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
   * Returns once no live (non-zombie) process is in the group, or after {@code bound}. Reads {@code
   * /proc} with a short pause between reads: there is no notification of a non-child's death to
   * wait on (a zombie is dead for this purpose: it runs nothing and holds no pipe).
   *
   * @return whether the group is gone
   */
  static boolean awaitGone(long pgid, Duration bound) {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!liveMembers(pgid).isEmpty()) {
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      LockSupport.parkNanos(SETTLE_PAUSE_NANOS);
    }
    return true;
  }

  /** Between two reads of {@code /proc} while a killed group dies: short next to any timer. */
  private static final long SETTLE_PAUSE_NANOS = Duration.ofMillis(2).toNanos();

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
