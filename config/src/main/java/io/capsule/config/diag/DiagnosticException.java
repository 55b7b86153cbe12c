package io.capsule.config.diag;

import java.util.List;

/**
 * The unchecked root of every refusal that carries diagnostics. Each module has its own subclass
 * (so a supervisor can tell a driver trap from an invalid manifest) and never throws a bare runtime
 * exception for a condition a person can act on.
 */
public class DiagnosticException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient List<Diagnostic> diagnostics;

  public DiagnosticException(Diagnostic diagnostic) {
    this(List.of(diagnostic), null);
  }

  public DiagnosticException(Diagnostic diagnostic, Throwable cause) {
    this(List.of(diagnostic), cause);
  }

  public DiagnosticException(List<Diagnostic> diagnostics, Throwable cause) {
    super(summary(diagnostics), cause);
    if (diagnostics.isEmpty()) {
      throw new IllegalArgumentException("a DiagnosticException needs at least one diagnostic");
    }
    this.diagnostics = List.copyOf(diagnostics);
  }

  /** The first (for a single refusal, the only) diagnostic. */
  public Diagnostic diagnostic() {
    return diagnostics.get(0);
  }

  public List<Diagnostic> diagnostics() {
    return diagnostics;
  }

  public Code code() {
    return diagnostic().code();
  }

  private static String summary(List<Diagnostic> diagnostics) {
    if (diagnostics.isEmpty()) {
      return "no diagnostics";
    }
    if (diagnostics.size() == 1) {
      return diagnostics.get(0).toString();
    }
    return diagnostics.get(0) + " (and " + (diagnostics.size() - 1) + " more)";
  }
}
