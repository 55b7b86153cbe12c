package io.capsule.driver.api;

/** WIT {@code session-mode}: whether a turn starts a harness session or continues one. */
public enum SessionMode {
  NEW("new"),
  RESUME("resume");

  private final String witName;

  SessionMode(String witName) {
    this.witName = witName;
  }

  public String witName() {
    return witName;
  }
}
