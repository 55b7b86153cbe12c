package io.capsule.config.manifest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Finds the project's {@code examples/} folder from wherever the tests run. */
final class Examples {

  private Examples() {}

  /** Every folder of {@code examples/} that holds a {@code murmur.yaml}. */
  static List<Path> capsules() throws IOException {
    try (Stream<Path> dirs = Files.list(dir("hello").getParent())) {
      return dirs.filter(d -> Files.isRegularFile(d.resolve(Manifest.FILE_NAME))).sorted().toList();
    }
  }

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
