package io.capsule.runtime.harness;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;

/**
 * A launch plan the runtime cannot apply (docs/run-semantics.md §4): always {@code E-RUN-034},
 * because the driver produced it. The message names the offending file or variable, never a value.
 */
public final class LaunchPlanRefused extends DiagnosticException {
  private static final long serialVersionUID = 1L;

  LaunchPlanRefused(String message) {
    super(Diagnostic.of(Code.E_RUN_034, "driver gave an unusable launch plan: " + message));
  }

  LaunchPlanRefused(String message, Throwable cause) {
    super(Diagnostic.of(Code.E_RUN_034, "driver gave an unusable launch plan: " + message), cause);
  }
}
