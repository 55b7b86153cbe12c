package io.capsule.protocol;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;

/**
 * The root of every refusal the protocol module raises. Subclasses name what a caller must tell
 * apart: a frame that cannot be read ({@link FrameRejected}), a replay buffer that overflowed
 * ({@link ReplayOverflow}), a bearer token refused ({@link TokenRefused}), TLS that does not verify
 * ({@link TlsRefused}).
 */
public class ProtocolException extends DiagnosticException {
  private static final long serialVersionUID = 1L;

  public ProtocolException(Diagnostic diagnostic) {
    super(diagnostic);
  }

  public ProtocolException(Diagnostic diagnostic, Throwable cause) {
    super(diagnostic, cause);
  }

  /**
   * A frame that is malformed ({@code E-PRO-001}), of an unknown type ({@code E-PRO-002}), of
   * another schema version ({@code E-PRO-003}), invalid ({@code E-PRO-004}) or too large ({@code
   * E-PRO-005}). Never fatal to a connection: the receiver logs it and may answer an error frame.
   */
  public static final class FrameRejected extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public FrameRejected(Code code, String message) {
      super(Diagnostic.of(code, message));
    }

    public FrameRejected(Code code, String message, Throwable cause) {
      super(Diagnostic.of(code, message), cause);
    }
  }

  /** The replay buffer is full: {@code E-PRO-006}. The frame was not sequenced. */
  public static final class ReplayOverflow extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public ReplayOverflow(String message) {
      super(Diagnostic.of(Code.E_PRO_006, message));
    }
  }

  /**
   * A bearer token was refused ({@code E-PRO-007}), or its project differs from the hello's ({@code
   * E-PRO-008}).
   */
  public static final class TokenRefused extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public TokenRefused(Code code, String message) {
      super(Diagnostic.of(code, message));
    }

    public TokenRefused(Code code, String message, Throwable cause) {
      super(Diagnostic.of(code, message), cause);
    }
  }

  /**
   * TLS material that cannot be used ({@code E-TLS-001}), or a peer whose certificate does not
   * verify: an unknown CA ({@code E-TLS-002}), expired ({@code E-TLS-003}), another host's ({@code
   * E-TLS-004}), or a handshake that failed otherwise ({@code E-TLS-005}).
   */
  public static final class TlsRefused extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public TlsRefused(Code code, String message) {
      super(Diagnostic.of(code, message));
    }

    public TlsRefused(Code code, String message, Throwable cause) {
      super(Diagnostic.of(code, message), cause);
    }
  }
}
