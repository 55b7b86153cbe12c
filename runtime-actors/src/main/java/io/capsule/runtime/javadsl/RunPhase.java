package io.capsule.runtime.javadsl;

/** The run phases sent as progress kind {@code state} (docs/runner-protocol.md). */
public enum RunPhase {
  ACCEPTED("accepted"),
  STARTING("starting"),
  RUNNING("running"),
  INTERRUPTING("interrupting"),
  FINISHED("finished");

  private final String wire;

  RunPhase(String wire) {
    this.wire = wire;
  }

  /** The spelling on the wire. */
  public String wire() {
    return wire;
  }
}
