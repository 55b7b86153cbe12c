package io.capsule.runtime.harness;

import java.util.Objects;
import java.util.Optional;

/** How a bounded helper command (version probe, login check) ended (docs/run-semantics.md §3). */
public sealed interface CommandOutcome {

  /**
   * It exited within the bound.
   *
   * @param exitCode empty when a signal ended it
   * @param signal the signal that ended it, if any (the JDK's 128+N convention)
   */
  record Finished(
      Optional<Integer> exitCode, Optional<Integer> signal, String stdout, String stderr)
      implements CommandOutcome {
    public Finished {
      Objects.requireNonNull(exitCode, "exitCode");
      Objects.requireNonNull(signal, "signal");
      Objects.requireNonNull(stdout, "stdout");
      Objects.requireNonNull(stderr, "stderr");
    }
  }

  /** It ran past the bound and its process group was killed; its output is not used. */
  record TimedOut(java.time.Duration bound) implements CommandOutcome {}

  /** It could not be started (missing or not executable binary, spawn error). */
  record NotStarted(String reason) implements CommandOutcome {
    public NotStarted {
      Objects.requireNonNull(reason, "reason");
    }
  }
}
