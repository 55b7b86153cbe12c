package io.capsule.driver.api;

/** WIT {@code quota-state}: whether a subscription window still has room. */
public enum QuotaState {
  OK("ok"),
  WARNING("warning"),
  EXHAUSTED("exhausted");

  private final String witName;

  QuotaState(String witName) {
    this.witName = witName;
  }

  public String witName() {
    return witName;
  }
}
