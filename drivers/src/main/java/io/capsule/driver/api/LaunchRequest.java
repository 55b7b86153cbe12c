package io.capsule.driver.api;

import java.util.Objects;
import java.util.Optional;

/** WIT {@code launch-request}: everything the driver needs to plan one turn. */
public record LaunchRequest(
    Optional<String> model,
    String systemPrompt,
    Optional<String> config,
    Optional<Bridge> bridge,
    Session session,
    Optional<String> harnessVersion,
    String task) {

  public LaunchRequest {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(systemPrompt, "systemPrompt");
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(bridge, "bridge");
    Objects.requireNonNull(session, "session");
    Objects.requireNonNull(harnessVersion, "harnessVersion");
    Objects.requireNonNull(task, "task");
  }
}
