package io.capsule.config.manifest;

/** How the runtime talks to the harness. Process is the only transport this runtime has. */
public enum Transport {
  PROCESS("process");

  private final String yaml;

  Transport(String yaml) {
    this.yaml = yaml;
  }

  /** The spelling in {@code murmur.yaml}. */
  public String yaml() {
    return yaml;
  }
}
