package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code result<launch-plan, string>}: a plan, or the driver's refusal with its message. */
public sealed interface LaunchResult {

  record Planned(LaunchPlan plan) implements LaunchResult {
    public Planned {
      Objects.requireNonNull(plan, "plan");
    }
  }

  record Refused(String message) implements LaunchResult {
    public Refused {
      Objects.requireNonNull(message, "message");
    }
  }
}
