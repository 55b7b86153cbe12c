package io.capsule.driver.wasm;

import io.capsule.config.diag.Diagnostic;

/**
 * A value did not lift or lower per the canonical ABI: bad pointer or alignment, invalid UTF-8, a
 * discriminant out of range, a bool other than 0/1, a list length that overflows.
 */
public class AbiViolation extends DriverException {
  private static final long serialVersionUID = 1L;

  public AbiViolation(Diagnostic diagnostic) {
    super(diagnostic);
  }

  public AbiViolation(Diagnostic diagnostic, Throwable cause) {
    super(diagnostic, cause);
  }
}
