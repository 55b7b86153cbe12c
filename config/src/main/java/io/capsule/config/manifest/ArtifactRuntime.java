package io.capsule.config.manifest;

/** What an artifact is for: the process driver, or a tool the capsule ships. */
public enum ArtifactRuntime {
  DRIVER("driver"),
  TOOL("tool");

  private final String yaml;

  ArtifactRuntime(String yaml) {
    this.yaml = yaml;
  }

  /** The spelling in {@code murmur.yaml}. */
  public String yaml() {
    return yaml;
  }
}
