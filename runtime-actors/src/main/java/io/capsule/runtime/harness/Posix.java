package io.capsule.runtime.harness;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The few libc calls Java 17 has no API for, through JNA: signal a process group ({@code kill(2)}
 * with a negative pid; Java can neither address a group nor send SIGINT), and wait for processes
 * that are not our children to end ({@code pidfd_open(2)} + {@code poll(2)}: the kernel says when
 * each one died, so nothing polls {@code /proc}). Linux only, as the rest of the harness code.
 *
 * <p>Every call is a system call on the calling thread; {@link #awaitExit} blocks up to its bound:
 * call it on a blocking dispatcher.
 */
final class Posix {

  /** Signal numbers of Linux (x86-64 and arm64 alike for these three). */
  static final int SIGINT = 2;

  static final int SIGKILL = 9;
  static final int SIGTERM = 15;

  /** {@code pidfd_open}'s number: one table for every Linux architecture since 5.3. */
  private static final long SYS_PIDFD_OPEN = 434;

  private static final short POLLIN = 0x1;

  /** The subset of libc used here. */
  interface LibC extends Library {
    int kill(int pid, int sig);

    long syscall(long number, Object... args);

    int poll(Memory fds, int nfds, int timeoutMillis);

    int close(int fd);
  }

  private static final LibC C = Native.load(Platform.C_LIBRARY_NAME, LibC.class);

  private Posix() {}

  /**
   * Sends {@code signal} to every process of group {@code pgid}.
   *
   * @return true when at least one process got it; false when the group is gone
   */
  static boolean signalGroup(long pgid, int signal) {
    if (pgid <= 1 || pgid > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("refusing to signal process group " + pgid);
    }
    return C.kill((int) -pgid, signal) == 0;
  }

  /**
   * Waits until every one of {@code pids} has ended (a zombie has ended: it runs nothing and holds
   * no pipe), or until {@code bound} passed.
   *
   * @return whether all ended within the bound
   */
  static boolean awaitExit(List<Long> pids, Duration bound) {
    List<Integer> fds = new ArrayList<>();
    try {
      for (long pid : pids) {
        int fd = (int) C.syscall(SYS_PIDFD_OPEN, (int) pid, 0);
        if (fd >= 0) {
          fds.add(fd); // a pid that cannot be opened has already ended (and been reaped)
        }
      }
      long deadline = System.nanoTime() + bound.toNanos();
      List<Integer> open = new ArrayList<>(fds);
      while (!open.isEmpty()) {
        long left = Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
        Memory set = new Memory(8L * open.size());
        for (int i = 0; i < open.size(); i++) {
          set.setInt(8L * i, open.get(i));
          set.setShort(8L * i + 4, POLLIN);
          set.setShort(8L * i + 6, (short) 0);
        }
        // Returns when one of them ended (each call removes at least one), or at the deadline.
        int ready = C.poll(set, open.size(), (int) Math.min(left, Integer.MAX_VALUE));
        if (ready == 0) {
          return false;
        }
        List<Integer> still = new ArrayList<>();
        for (int i = 0; i < open.size(); i++) {
          if (set.getShort(8L * i + 6) == 0) {
            still.add(open.get(i));
          }
        }
        if (ready < 0 && still.size() == open.size() && left == 0) {
          return false;
        }
        open = still;
      }
      return true;
    } finally {
      fds.forEach(C::close);
    }
  }
}
