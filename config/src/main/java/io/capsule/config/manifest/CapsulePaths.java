package io.capsule.config.manifest;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The only place manifest validation touches the file system: whether a manifest path stays inside
 * the capsule directory, and reading a file that is inlined.
 *
 * <p>"Inside" is decided on real paths: the capsule directory's real path, and the target's real
 * path (or, when the target does not exist yet, its deepest existing ancestor's real path plus the
 * rest), so both {@code ..} and a symlink pointing out are caught.
 */
final class CapsulePaths {

  private final Path realDir;

  CapsulePaths(Path capsuleDir) {
    this.realDir = realOrNormal(capsuleDir.toAbsolutePath().normalize());
  }

  /** The capsule directory as validation saw it (its real path when it exists). */
  Path dir() {
    return realDir;
  }

  /** Why {@code relative} escapes the capsule directory, or empty when it stays inside. */
  Optional<String> escape(String relative) {
    Path given;
    try {
      given = Path.of(relative);
    } catch (InvalidPathException e) {
      return Optional.of("'" + relative + "' is not a valid path");
    }
    if (given.isAbsolute()) {
      return Optional.of(
          "'" + relative + "' is absolute; write it relative to the capsule directory");
    }
    Path lexical = realDir.resolve(given).normalize();
    if (!lexical.startsWith(realDir)) {
      return Optional.of("'" + relative + "' leaves the capsule directory through '..'");
    }
    Path real = realOrNormal(lexical);
    if (!real.startsWith(realDir)) {
      return Optional.of(
          "'" + relative + "' resolves through a symlink to " + real + ", outside the capsule");
    }
    return Optional.empty();
  }

  /** {@code relative} resolved against the capsule directory. */
  Path resolve(String relative) {
    return realDir.resolve(relative).normalize();
  }

  /** The text of a file inside the capsule, or why it cannot be read. */
  sealed interface Read permits Text, Unreadable {}

  record Text(String text) implements Read {}

  record Unreadable(String reason) implements Read {}

  /** Reads {@code relative} (already checked not to escape) as strict UTF-8. */
  Read readUtf8(String relative) {
    Path file = resolve(relative);
    if (Files.isDirectory(file)) {
      return new Unreadable("'" + relative + "' is a directory, not a file");
    }
    try {
      return new Text(TextFiles.readUtf8(file));
    } catch (NoSuchFileException e) {
      return new Unreadable("'" + relative + "' does not exist in the capsule");
    } catch (CharacterCodingException e) {
      return new Unreadable("'" + relative + "' is not UTF-8 text");
    } catch (TextFiles.TooLarge e) {
      return new Unreadable("'" + relative + "' is " + e.getMessage());
    } catch (IOException e) {
      return new Unreadable("'" + relative + "' cannot be read: " + e.getMessage());
    }
  }

  /** The real path of {@code path}, resolving the deepest existing ancestor when it is missing. */
  private static Path realOrNormal(Path path) {
    Path existing = path;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return path;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(path)).normalize();
    } catch (IOException e) {
      return path;
    }
  }
}
