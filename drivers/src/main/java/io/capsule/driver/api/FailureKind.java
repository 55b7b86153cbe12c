package io.capsule.driver.api;

/** WIT {@code failure-kind}: why a turn failed. */
public enum FailureKind {
  AUTH("auth"),
  QUOTA("quota"),
  MAX_TURNS("max-turns"),
  CANCELED("canceled"),
  HARNESS_ERROR("harness-error"),
  OTHER("other");

  private final String witName;

  FailureKind(String witName) {
    this.witName = witName;
  }

  public String witName() {
    return witName;
  }
}
