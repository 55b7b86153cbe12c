package io.capsule.config.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code inference.driver}: which artifact is the driver and what configuration it gets.
 *
 * <p>The config tree is copied in and out: a {@link JsonNode} is mutable, a manifest is not.
 *
 * @param artifact the name of an {@code artifacts[]} entry with {@code runtime: driver}
 * @param config any YAML the capsule gives the driver, handed to {@code launch()} as JSON; empty
 *     when the key is absent or null
 */
public record DriverRef(String artifact, Optional<JsonNode> config) {

  public DriverRef {
    Objects.requireNonNull(artifact, "artifact");
    config = Objects.requireNonNull(config, "config").map(JsonNode::deepCopy);
  }

  /** A copy of the driver's config tree (mutating it changes nothing here). */
  @Override
  public Optional<JsonNode> config() {
    return config.map(JsonNode::deepCopy);
  }

  /** The config as compact JSON text, the form {@code launch()} receives; empty when absent. */
  public Optional<String> configJson() {
    return config.map(JsonNode::toString);
  }
}
