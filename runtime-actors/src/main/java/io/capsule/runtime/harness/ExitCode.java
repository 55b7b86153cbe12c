package io.capsule.runtime.harness;

import java.util.Optional;

/**
 * How a process ended, decoded from the JDK's exit value: the JDK reports a death by signal N as
 * 128+N (the shell's convention too), so 129..192 is read as that signal and no code. A process
 * that really exits with such a code is reported as the signal; a driver treats both alike.
 */
record ExitCode(Optional<Integer> code, Optional<Integer> signal) {

  private static final int SIGNAL_BASE = 128;
  private static final int HIGHEST_SIGNAL = 64;

  static ExitCode decode(int status) {
    if (status > SIGNAL_BASE && status <= SIGNAL_BASE + HIGHEST_SIGNAL) {
      return new ExitCode(Optional.empty(), Optional.of(status - SIGNAL_BASE));
    }
    return new ExitCode(Optional.of(status), Optional.empty());
  }
}
