package io.capsule.config.manifest;

/** {@code lifecycle.conversation}: whether tasks of one conversation resume a harness session. */
public enum Conversation {
  /** Every task starts a new session (the default). */
  STATELESS("stateless"),
  /** The first task of a conversation starts a session; later ones resume it. */
  THREADED("threaded");

  private final String yaml;

  Conversation(String yaml) {
    this.yaml = yaml;
  }

  /** The spelling in {@code murmur.yaml}. */
  public String yaml() {
    return yaml;
  }
}
