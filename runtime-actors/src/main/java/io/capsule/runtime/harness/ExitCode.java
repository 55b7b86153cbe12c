package io.capsule.runtime.harness;

import java.util.Optional;
import java.util.Set;

/**
 * How a process ended, decoded from the JDK's exit value.
 *
 * <p>The JDK reports a death by signal N as 128+N (the shell's convention too), and a process may
 * also exit with such a value by itself: Gemini CLI exits with the HTTP status modulo 256, so a 401
 * ends with 145. The value alone cannot tell the two apart, so the runtime's own knowledge decides:
 * a value in 129..192 is read as signal N only when the runtime sent N to the process's group while
 * it ran (SIGINT for an interrupt, SIGKILL for a kill); otherwise it is read as that exit code. A
 * harness that a third party kills (the OOM killer's SIGKILL, a crash's SIGSEGV) is therefore
 * reported as code 137 or 139; drivers name the code, so the cause stays visible, and a driver's
 * exit-code rules (145 → auth) do fire.
 */
record ExitCode(Optional<Integer> code, Optional<Integer> signal) {

  /** The signal numbers the runtime sends (Linux): an interrupt and a kill. */
  static final int SIGINT = 2;

  static final int SIGKILL = 9;

  private static final int SIGNAL_BASE = 128;
  private static final int HIGHEST_SIGNAL = 64;

  /**
   * @param status the JDK's exit value
   * @param signalsSent the signals the runtime sent to the process's group before it exited
   */
  static ExitCode decode(int status, Set<Integer> signalsSent) {
    if (status > SIGNAL_BASE
        && status <= SIGNAL_BASE + HIGHEST_SIGNAL
        && signalsSent.contains(status - SIGNAL_BASE)) {
      return new ExitCode(Optional.empty(), Optional.of(status - SIGNAL_BASE));
    }
    return new ExitCode(Optional.of(status), Optional.empty());
  }
}
