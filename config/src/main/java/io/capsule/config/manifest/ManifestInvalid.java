package io.capsule.config.manifest;

import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The manifest cannot be used. Carries <em>every</em> error found (sorted by line, then column),
 * never only the first, plus the warnings found on the way.
 */
public final class ManifestInvalid extends DiagnosticException {
  private static final long serialVersionUID = 1L;

  private final transient List<Diagnostic> warnings;

  public ManifestInvalid(List<Diagnostic> errors, List<Diagnostic> warnings) {
    super(errors, null);
    this.warnings = List.copyOf(warnings);
  }

  /** Warnings found while validating (they do not make the manifest invalid). */
  public List<Diagnostic> warnings() {
    return warnings;
  }

  /** Every error rendered as {@link Diagnostic#render()} does, one after another. */
  public String render() {
    return diagnostics().stream()
        .map(Diagnostic::render)
        .collect(Collectors.joining(System.lineSeparator()));
  }
}
