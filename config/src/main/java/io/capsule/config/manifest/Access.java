package io.capsule.config.manifest;

/** How much a harness may do with a granted host path. */
public enum Access {
  READ("read"),
  READ_WRITE("read-write");

  private final String yaml;

  Access(String yaml) {
    this.yaml = yaml;
  }

  /** The spelling in {@code murmur.yaml} and in driver descriptions. */
  public String yaml() {
    return yaml;
  }

  /** Whether a grant at this access satisfies a need at {@code needed} (read-write ⊇ read). */
  public boolean covers(Access needed) {
    return this == READ_WRITE || needed == READ;
  }
}
