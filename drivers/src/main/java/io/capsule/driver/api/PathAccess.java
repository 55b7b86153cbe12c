package io.capsule.driver.api;

/** WIT {@code path-access}: what a harness need may do with a host path. */
public enum PathAccess {
  READ("read"),
  READ_WRITE("read-write");

  private final String witName;

  PathAccess(String witName) {
    this.witName = witName;
  }

  public String witName() {
    return witName;
  }

  /** Whether a grant of this access covers a need of {@code need} access. */
  public boolean covers(PathAccess need) {
    return this == READ_WRITE || need == READ;
  }
}
