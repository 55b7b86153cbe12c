package io.capsule.config.manifest;

/**
 * Where something is in the manifest text, 1-based like an editor shows it.
 *
 * @param line 1-based line
 * @param column 1-based column
 */
public record SourceLocation(int line, int column) implements Comparable<SourceLocation> {

  public SourceLocation {
    if (line < 1 || column < 1) {
      throw new IllegalArgumentException("line and column are 1-based: " + line + ":" + column);
    }
  }

  @Override
  public int compareTo(SourceLocation other) {
    int byLine = Integer.compare(line, other.line);
    return byLine != 0 ? byLine : Integer.compare(column, other.column);
  }

  @Override
  public String toString() {
    return line + ":" + column;
  }
}
