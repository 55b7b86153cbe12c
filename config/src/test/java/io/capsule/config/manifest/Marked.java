package io.capsule.config.manifest;

/**
 * YAML text with one {@code §} marking where a diagnostic must point. The expected line and column
 * are computed from the marker's position, so a table row cannot miscount them.
 */
record Marked(String text, int line, int column) {

  static final char MARK = '§';

  static Marked of(String withMark) {
    int at = withMark.indexOf(MARK);
    if (at < 0 || withMark.indexOf(MARK, at + 1) >= 0) {
      throw new IllegalArgumentException("exactly one § marker expected in:\n" + withMark);
    }
    String before = withMark.substring(0, at);
    int line = (int) before.chars().filter(c -> c == '\n').count() + 1;
    int column = at - (before.lastIndexOf('\n') + 1) + 1;
    return new Marked(before + withMark.substring(at + 1), line, column);
  }
}
