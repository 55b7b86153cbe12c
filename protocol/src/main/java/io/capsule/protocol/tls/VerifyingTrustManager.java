package io.capsule.protocol.tls;

import io.capsule.config.diag.Code;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The JDK's PKIX trust manager (chain and host name checked by it, nothing relaxed), with one
 * addition: when it refuses a server's certificate, the refusal says why in words a person acts on
 * and with the code of that reason — an unknown CA ({@code E-TLS-002}), a certificate out of its
 * validity ({@code E-TLS-003}), or one that names other hosts ({@code E-TLS-004}) — and names the
 * host. The reason is found by asking the same trust manager again without the host check: if the
 * chain passes, the host name was what failed.
 *
 * <p>Thread-safe (the delegate is).
 */
final class VerifyingTrustManager extends X509ExtendedTrustManager {

  /** A refusal with its code; {@link ClientTls#explain} finds it in a handshake's failure. */
  static final class CertificateRefused extends CertificateException {
    private static final long serialVersionUID = 1L;
    final transient Code code;

    CertificateRefused(Code code, String message, Throwable cause) {
      super(message, cause);
      this.code = code;
    }
  }

  private final X509ExtendedTrustManager delegate;

  VerifyingTrustManager(X509ExtendedTrustManager delegate) {
    this.delegate = delegate;
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    try {
      delegate.checkServerTrusted(chain, authType, engine);
    } catch (CertificateException e) {
      String host = engine == null ? "?" : engine.getPeerHost() + ":" + engine.getPeerPort();
      throw explained(chain, authType, host, e);
    }
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    try {
      delegate.checkServerTrusted(chain, authType, socket);
    } catch (CertificateException e) {
      String host =
          socket == null ? "?" : socket.getInetAddress().getHostName() + ":" + socket.getPort();
      throw explained(chain, authType, host, e);
    }
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    try {
      delegate.checkServerTrusted(chain, authType);
    } catch (CertificateException e) {
      throw explained(chain, authType, "?", e);
    }
  }

  private CertificateRefused explained(
      X509Certificate[] chain, String authType, String host, CertificateException failure) {
    X509Certificate leaf = chain[0];
    String who = "the certificate of " + host + " (" + leaf.getSubjectX500Principal().getName();
    try {
      delegate.checkServerTrusted(chain, authType); // the chain alone: no host name check
      return new CertificateRefused(
          Code.E_TLS_004, who + ") names " + names(leaf) + ", not the host dialled", failure);
    } catch (CertificateException chainFailure) {
      try {
        leaf.checkValidity();
      } catch (CertificateExpiredException e) {
        return new CertificateRefused(
            Code.E_TLS_003, who + ") expired on " + leaf.getNotAfter().toInstant(), failure);
      } catch (CertificateNotYetValidException e) {
        return new CertificateRefused(
            Code.E_TLS_003,
            who + ") is not valid until " + leaf.getNotBefore().toInstant(),
            failure);
      }
      return new CertificateRefused(
          Code.E_TLS_002,
          who
              + ") is issued by "
              + chain[chain.length - 1].getIssuerX500Principal().getName()
              + ", a CA this side does not trust",
          failure);
    }
  }

  /** The DNS names and IP addresses of the certificate's subjectAltName. */
  private static String names(X509Certificate cert) {
    List<String> names = new ArrayList<>();
    try {
      Collection<List<?>> alt = cert.getSubjectAlternativeNames();
      if (alt != null) {
        for (List<?> entry : alt) {
          int type = (Integer) entry.get(0);
          if (type == 2 || type == 7) { // dNSName, iPAddress
            names.add(String.valueOf(entry.get(1)));
          }
        }
      }
    } catch (CertificateParsingException e) {
      return "no readable subjectAltName";
    }
    return names.isEmpty() ? "no subjectAltName" : String.join(", ", names);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    delegate.checkClientTrusted(chain, authType, socket);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    delegate.checkClientTrusted(chain, authType, engine);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    delegate.checkClientTrusted(chain, authType);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return delegate.getAcceptedIssuers();
  }
}
