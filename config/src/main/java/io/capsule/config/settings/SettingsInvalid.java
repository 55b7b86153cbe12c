package io.capsule.config.settings;

import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import java.util.List;

/** Runtime settings under {@code capsule.*} are missing or invalid: every bad key, E-CFG-001. */
public final class SettingsInvalid extends DiagnosticException {
  private static final long serialVersionUID = 1L;

  public SettingsInvalid(List<Diagnostic> diagnostics) {
    super(diagnostics, null);
  }
}
