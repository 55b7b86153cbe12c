package io.capsule.driver.wasm;

import io.capsule.config.diag.Diagnostic;

/** The guest trapped, overran its call deadline or hit its memory cap. */
public class DriverTrap extends DriverException {
  private static final long serialVersionUID = 1L;

  public DriverTrap(Diagnostic diagnostic, Throwable cause) {
    super(diagnostic, cause);
  }
}
