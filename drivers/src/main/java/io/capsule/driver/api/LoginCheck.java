package io.capsule.driver.api;

import java.util.List;
import java.util.Objects;

/** WIT {@code login-check}: how to ask the harness whether it is signed in. */
public sealed interface LoginCheck {

  /** Run {@code description.binary} with these arguments and hand the output to read-login. */
  record Command(List<String> args) implements LoginCheck {
    public Command {
      args = List.copyOf(args);
    }
  }

  /** The harness cannot be asked without a turn; the reason is shown to the person. */
  record Unavailable(String reason) implements LoginCheck {
    public Unavailable {
      Objects.requireNonNull(reason, "reason");
    }
  }
}
