package io.capsule.config.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.diag.Code;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Validates {@code capabilities.resources} (docs/manifest.md "capabilities.resources"): part of
 * {@link CapabilitiesValidator}, split out for size. Every bound below refuses a value that cannot
 * be what the author meant; what a run really gets is then capped by the operator's ceiling.
 */
final class ResourcesValidator {

  static final Set<String> KEYS = Set.of("memory", "processes", "cpu", "file_size", "open_files");

  /** Below 16 MiB not even bubblewrap, a shell and a dynamically linked binary start. */
  static final long MIN_MEMORY = 16L << 20;

  /** bubblewrap's two processes plus the harness itself. */
  static final int MIN_PROCESSES = 4;

  /** The kernel's PID_MAX_LIMIT: no machine can have more tasks. */
  static final int MAX_PROCESSES = 4_194_304;

  /** The CFS quota's floor is 1 ms per 100 ms period: 0.01 of a core. */
  static final double MIN_CPU = 0.01;

  /** More cores than any machine a runner meets; a larger number is a typo. */
  static final double MAX_CPU = 1024;

  /** A harness writes session and settings files; a limit under 1 MiB breaks it at once. */
  static final long MIN_FILE_SIZE = 1L << 20;

  /** A dynamically linked node or python opens dozens of files before its first line. */
  static final int MIN_OPEN_FILES = 64;

  /** The kernel's default fs.nr_open: a process cannot be given more. */
  static final int MAX_OPEN_FILES = 1_048_576;

  private final Problems problems;

  ResourcesValidator(Problems problems) {
    this.problems = problems;
  }

  Capabilities.Resources resources(Section section) {
    return new Capabilities.Resources(
        size(section, "memory", MIN_MEMORY),
        count(section, "processes", MIN_PROCESSES, MAX_PROCESSES),
        cores(section),
        size(section, "file_size", MIN_FILE_SIZE),
        count(section, "open_files", MIN_OPEN_FILES, MAX_OPEN_FILES));
  }

  private OptionalLong size(Section section, String key, long min) {
    Optional<JsonNode> raw = section.raw(key, false);
    if (raw.isEmpty()) {
      return OptionalLong.empty();
    }
    JsonNode v = raw.get();
    String at = section.pathOf(key);
    long bytes;
    if (v.isIntegralNumber() && v.canConvertToLong()) {
      bytes = v.longValue();
    } else if (v.isTextual()) {
      try {
        bytes = ByteSize.parse(v.textValue());
      } catch (IllegalArgumentException bad) {
        problems.atValue(Code.E_MAN_002, at, at + ": " + bad.getMessage());
        return OptionalLong.empty();
      }
    } else {
      problems.atValue(
          Code.E_MAN_002,
          at,
          at + " must be a size like 512MiB or 2GiB, got " + Section.describe(v));
      return OptionalLong.empty();
    }
    if (bytes < min) {
      problems.atValue(
          Code.E_MAN_002,
          at,
          at + " must be at least " + ByteSize.show(min) + ", got " + ByteSize.show(bytes));
      return OptionalLong.empty();
    }
    return OptionalLong.of(bytes);
  }

  private OptionalInt count(Section section, String key, int min, int max) {
    Optional<JsonNode> raw = section.raw(key, false);
    if (raw.isEmpty()) {
      return OptionalInt.empty();
    }
    JsonNode v = raw.get();
    String at = section.pathOf(key);
    if (!v.isIntegralNumber()) {
      problems.atValue(
          Code.E_MAN_002, at, at + " must be a whole number, got " + Section.describe(v));
      return OptionalInt.empty();
    }
    if (!v.canConvertToInt() || v.intValue() < min || v.intValue() > max) {
      problems.atValue(
          Code.E_MAN_002,
          at,
          at + " must be between " + min + " and " + max + ", got " + v.asText());
      return OptionalInt.empty();
    }
    return OptionalInt.of(v.intValue());
  }

  private OptionalDouble cores(Section section) {
    Optional<JsonNode> raw = section.raw("cpu", false);
    if (raw.isEmpty()) {
      return OptionalDouble.empty();
    }
    JsonNode v = raw.get();
    String at = section.pathOf("cpu");
    if (!v.isNumber()) {
      problems.atValue(
          Code.E_MAN_002,
          at,
          at + " must be a number of cores like 1 or 1.5, got " + Section.describe(v));
      return OptionalDouble.empty();
    }
    double cores = v.doubleValue();
    if (!(cores >= MIN_CPU && cores <= MAX_CPU)) {
      problems.atValue(
          Code.E_MAN_002,
          at,
          at
              + " must be between "
              + MIN_CPU
              + " and "
              + (int) MAX_CPU
              + " cores, got "
              + v.asText());
      return OptionalDouble.empty();
    }
    return OptionalDouble.of(cores);
  }
}
