package io.capsule.driver.api;

import java.util.Objects;
import java.util.Optional;

/**
 * WIT {@code exit-status}: how the harness exited, for output that ended with no terminal event.
 */
public record ExitStatus(
    Optional<Integer> code,
    Optional<Integer> signal,
    String stderrTail,
    boolean interrupted,
    boolean sawTerminal) {
  public ExitStatus {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(signal, "signal");
    Objects.requireNonNull(stderrTail, "stderrTail");
  }
}
