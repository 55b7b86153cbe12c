package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/** Reading and writing cgroup interface files; the parsers are pure. */
final class CgroupFiles {

  private CgroupFiles() {}

  /**
   * The value of {@code key} in a flat-keyed file ({@code memory.events}, {@code pids.events},
   * {@code memory.oom_control}): lines of {@code key value}. Empty when the key is absent.
   */
  static OptionalLong flatKeyed(String text, String key) {
    for (String line : text.split("\n")) {
      String[] kv = line.strip().split("\\s+");
      if (kv.length == 2 && kv[0].equals(key)) {
        try {
          return OptionalLong.of(Long.parseLong(kv[1]));
        } catch (NumberFormatException e) {
          return OptionalLong.empty();
        }
      }
    }
    return OptionalLong.empty();
  }

  /** The pids in a {@code cgroup.procs} text, one per line. */
  static List<Long> pids(String text) {
    List<Long> pids = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (!line.isBlank()) {
        pids.add(Long.parseLong(line.strip()));
      }
    }
    return pids;
  }

  /** The file's text, or empty text when it does not exist (an optional interface file). */
  static String readOrEmpty(Path file) throws IOException {
    try {
      return Files.readString(file, StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      return "";
    }
  }

  /** Writes one value to an interface file (which the kernel made; never creates one). */
  static void write(Path file, String value) throws IOException {
    Files.writeString(file, value, StandardCharsets.US_ASCII, StandardOpenOption.WRITE);
  }

  /** Writes when the kernel offers the file (e.g. swap accounting), else does nothing. */
  static void writeIfPresent(Path file, String value) throws IOException {
    if (Files.exists(file)) {
      write(file, value);
    }
  }
}
