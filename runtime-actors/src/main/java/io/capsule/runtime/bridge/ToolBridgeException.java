package io.capsule.runtime.bridge;

import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;

/**
 * The tool bridge could not be set up: a granted binary does not resolve ({@code E-TOOL-001}) or
 * the endpoint could not bind ({@code E-TOOL-009}). Refusals of single calls are never exceptions:
 * they are {@code isError} results and {@link ToolCallEvent.Finished} events.
 */
public final class ToolBridgeException extends DiagnosticException {
  private static final long serialVersionUID = 1L;

  public ToolBridgeException(Diagnostic diagnostic) {
    super(diagnostic);
  }

  public ToolBridgeException(Diagnostic diagnostic, Throwable cause) {
    super(diagnostic, cause);
  }
}
