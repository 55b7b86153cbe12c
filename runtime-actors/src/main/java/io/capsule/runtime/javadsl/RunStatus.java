package io.capsule.runtime.javadsl;

/** A finished run's report status (docs/runner-protocol.md, "How a capsule run fills a report"). */
public enum RunStatus {
  /** The turn ended with a result ({@code turn-end}). */
  DONE("done"),
  /** Every failure, a cancel included. */
  FAILED("failed"),
  /** The capsule could not start for a reason a person must fix (binary, grants, driver). */
  BLOCKED("blocked");

  private final String wire;

  RunStatus(String wire) {
    this.wire = wire;
  }

  public String wire() {
    return wire;
  }
}
