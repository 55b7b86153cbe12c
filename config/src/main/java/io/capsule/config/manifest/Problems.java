package io.capsule.config.manifest;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.Severity;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Collects what the validator finds, each with the details every manifest diagnostic carries:
 * {@code file}, {@code key} (the key path), {@code line} and {@code column} (1-based, absent for a
 * manifest built in memory).
 */
final class Problems {

  private record Found(Diagnostic diagnostic, Optional<SourceLocation> at, int order) {}

  private static final SourceLocation ORIGIN = new SourceLocation(1, 1);

  private static final Comparator<Found> BY_PLACE =
      Comparator.<Found>comparingInt(f -> f.at().isPresent() ? 0 : 1)
          .thenComparing(f -> f.at().orElse(ORIGIN))
          .thenComparingInt(Found::order);

  private final LocatedTree tree;
  private final String file;
  private final List<Found> found = new ArrayList<>();

  Problems(LocatedTree tree, String file) {
    this.tree = tree;
    this.file = file;
  }

  /** A problem about the key at {@code path} itself (unknown, duplicate, missing). */
  void atKey(Code code, String path, String message) {
    add(code, path, message, tree.keyLocation(path));
  }

  /** A problem about the value at {@code path} (wrong type, bad value, escaping path). */
  void atValue(Code code, String path, String message) {
    add(code, path, message, tree.valueLocation(path));
  }

  /** A problem at a location the caller knows (e.g. where a YAML parse failed). */
  void at(Code code, String path, String message, Optional<SourceLocation> at) {
    add(code, path, message, at);
  }

  boolean hasErrors() {
    return found.stream().anyMatch(f -> f.diagnostic().severity() == Severity.ERROR);
  }

  /** Errors sorted by line, then column, then discovery order; located ones first. */
  List<Diagnostic> errors() {
    return sorted(Severity.ERROR);
  }

  /** Warnings, sorted like errors. */
  List<Diagnostic> warnings() {
    return sorted(Severity.WARNING);
  }

  private List<Diagnostic> sorted(Severity severity) {
    return found.stream()
        .filter(f -> f.diagnostic().severity() == severity)
        .sorted(BY_PLACE)
        .map(Found::diagnostic)
        .toList();
  }

  private void add(Code code, String path, String message, Optional<SourceLocation> at) {
    Map<String, String> details = new LinkedHashMap<>();
    details.put("file", file);
    if (!path.isEmpty()) {
      details.put("key", path);
    }
    at.ifPresent(
        location -> {
          details.put("line", Integer.toString(location.line()));
          details.put("column", Integer.toString(location.column()));
        });
    found.add(new Found(Diagnostic.of(code, message, details), at, found.size()));
  }
}
