package io.capsule.hub;

import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;

/**
 * The root of every refusal the hub module raises itself (the runner protocol's refusals stay
 * {@link io.capsule.protocol.ProtocolException}s). Subclasses name what a caller must tell apart.
 */
public class HubException extends DiagnosticException {
  private static final long serialVersionUID = 1L;

  public HubException(Diagnostic diagnostic) {
    super(diagnostic);
  }

  public HubException(Diagnostic diagnostic, Throwable cause) {
    super(diagnostic, cause);
  }

  /**
   * The store cannot be reached or its schema created ({@code E-HUB-001}): the hub does not start.
   */
  public static final class StoreUnavailable extends HubException {
    private static final long serialVersionUID = 1L;

    public StoreUnavailable(Diagnostic diagnostic, Throwable cause) {
      super(diagnostic, cause);
    }
  }
}
