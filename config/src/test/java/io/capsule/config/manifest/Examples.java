package io.capsule.config.manifest;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the project's {@code examples/} folder from wherever the tests run. */
final class Examples {

  private Examples() {}

  /** {@code examples/<name>} at the reactor root (found by walking up from the working dir). */
  static Path dir(String name) {
    Path at = Path.of("").toAbsolutePath();
    while (at != null) {
      Path candidate = at.resolve("examples").resolve(name);
      if (Files.isDirectory(candidate)) {
        return candidate;
      }
      at = at.getParent();
    }
    throw new IllegalStateException(
        "no examples/" + name + " above " + Path.of("").toAbsolutePath());
  }
}
