package io.capsule.cli;

/** Whether output goes to a person's terminal that takes colours. */
final class Terminal {
  private Terminal() {}

  static boolean colors() {
    String term = System.getenv("TERM");
    return System.console() != null
        && System.getenv("NO_COLOR") == null
        && term != null
        && !"dumb".equals(term);
  }
}
