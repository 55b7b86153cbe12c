package io.capsule.driver.api;

/** WIT {@code interrupt-method}: how a turn in progress can be stopped gracefully. */
public enum InterruptMethod {
  /** Write {@code launch-plan.interrupt-stdin} to the harness's stdin. */
  STDIN_MESSAGE("stdin-message"),
  /** Send SIGINT to the harness's process group. */
  SIGNAL_INT("signal-int"),
  /** The harness cannot be interrupted gracefully; the runtime kills it. */
  UNSUPPORTED("unsupported");

  private final String witName;

  InterruptMethod(String witName) {
    this.witName = witName;
  }

  public String witName() {
    return witName;
  }
}
