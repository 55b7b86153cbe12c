package io.capsule.runtime.harness.contain;

import java.nio.file.Path;

/**
 * One step of the sandbox's file system, in bubblewrap's terms: {@code op [source] target}. For a
 * {@code --symlink}, {@code source} is the link's text; for a fresh file system ({@code --tmpfs},
 * {@code --dev}, {@code --proc}) or a {@code --dir}, it is {@code null}.
 */
record Mount(String op, Path source, Path target) {

  static Mount fresh(String op, Path target) {
    return new Mount(op, null, target);
  }

  static Mount bind(String op, Path path) {
    return new Mount(op, path, path);
  }

  int depth() {
    return target.getNameCount();
  }

  /**
   * A fresh file system or a directory is laid before the binds at the same depth, since a bind on
   * it must not be covered by it.
   */
  int order() {
    return switch (op) {
      case "--tmpfs", "--dev", "--proc", "--dir" -> 0;
      default -> 1;
    };
  }

  boolean writable() {
    return op.equals("--bind") || op.equals("--bind-try");
  }

  /** The words bubblewrap takes for it. */
  void appendTo(java.util.List<String> argv) {
    argv.add(op);
    if (source != null) {
      argv.add(source.toString());
    }
    argv.add(target.toString());
  }

  @Override
  public String toString() {
    return op + (source == null || source.equals(target) ? "" : " " + source) + " " + target;
  }
}
