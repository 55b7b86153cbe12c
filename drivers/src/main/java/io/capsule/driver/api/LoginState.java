package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code login-state}: whether the harness is signed in, as the driver reads it. */
public sealed interface LoginState {

  /** Signed in for this user. */
  record LoggedIn() implements LoginState {}

  /** Not signed in; the reason names how to sign in and carries no credential. */
  record LoggedOut(String reason) implements LoginState {
    public LoggedOut {
      Objects.requireNonNull(reason, "reason");
    }
  }

  /** The output could not be read. */
  record Unknown(String reason) implements LoginState {
    public Unknown {
      Objects.requireNonNull(reason, "reason");
    }
  }
}
