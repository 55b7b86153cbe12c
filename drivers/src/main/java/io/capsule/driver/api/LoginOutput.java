package io.capsule.driver.api;

import java.util.Objects;
import java.util.Optional;

/**
 * WIT {@code login-output}: what the login command printed; no exit code when a signal ended it.
 */
public record LoginOutput(Optional<Integer> exitCode, String stdout, String stderr) {
  public LoginOutput {
    Objects.requireNonNull(exitCode, "exitCode");
    Objects.requireNonNull(stdout, "stdout");
    Objects.requireNonNull(stderr, "stderr");
  }
}
