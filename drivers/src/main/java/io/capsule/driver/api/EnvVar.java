package io.capsule.driver.api;

import java.util.Objects;

/** One {@code tuple<string, string>} of {@code launch-plan.env-set}: a name and its value. */
public record EnvVar(String name, String value) {
  public EnvVar {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
  }

  /** Values may be secrets: only the name is shown. */
  @Override
  public String toString() {
    return "EnvVar[" + name + "]";
  }
}
