package io.capsule.driver.wasm;

import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;

/** The drivers module's unchecked root: a driver could not be loaded or a call failed. */
public class DriverException extends DiagnosticException {
  private static final long serialVersionUID = 1L;

  public DriverException(Diagnostic diagnostic) {
    super(diagnostic);
  }

  public DriverException(Diagnostic diagnostic, Throwable cause) {
    super(diagnostic, cause);
  }
}
