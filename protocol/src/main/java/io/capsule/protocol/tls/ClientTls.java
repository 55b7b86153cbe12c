package io.capsule.protocol.tls;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TlsRefused;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import org.apache.pekko.http.javadsl.ConnectionContext;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;

/**
 * What a client of the hub (the runner's dialer, an API client) trusts: the system's certificate
 * authorities (the JDK's {@code cacerts}, or {@code javax.net.ssl.trustStore} when set) plus, when
 * given, the CAs of a PEM file ({@code --ca-file}, for a hub whose certificate comes from a private
 * CA). The server's chain and its host name are both checked (HTTPS endpoint identification), TLS
 * 1.2+ only ({@link TlsPolicy}). A refusal is never a fallback to plain text: the connection fails,
 * and {@link #explain} turns the failure into {@code E-TLS-002..005} naming the host and the
 * reason.
 *
 * <p>Immutable and thread-safe; one instance serves any number of connections.
 */
public final class ClientTls {
  private static volatile ClientTls system;

  private final SSLContext context;
  private final String description;

  private ClientTls(SSLContext context, String description) {
    this.context = context;
    this.description = description;
  }

  /** The system's CAs only (made once, shared). */
  public static ClientTls system() {
    ClientTls s = system;
    if (s == null) {
      s = trusting(Optional.empty());
      system = s;
    }
    return s;
  }

  /**
   * The system's CAs plus those of {@code caFile} when present.
   *
   * @throws TlsRefused {@code E-TLS-001} when the file cannot be read or holds no certificate
   */
  public static ClientTls trusting(Optional<Path> caFile) {
    try {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      int n = 0;
      for (X509Certificate ca : pkix(null).getAcceptedIssuers()) {
        trust.setCertificateEntry("system-" + n++, ca);
      }
      List<X509Certificate> extra = caFile.map(Pem::certificates).orElse(List.of());
      for (X509Certificate ca : extra) {
        trust.setCertificateEntry("ca-file-" + n++, ca);
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, new TrustManager[] {new VerifyingTrustManager(pkix(trust))}, null);
      String what =
          caFile
              .map(f -> "the system's CAs and " + extra.size() + " from " + f)
              .orElse("the system's CAs");
      return new ClientTls(ctx, what);
    } catch (GeneralSecurityException | IOException e) {
      throw new TlsRefused(Code.E_TLS_001, "cannot build the client's trust store: " + e, e);
    }
  }

  private static X509ExtendedTrustManager pkix(KeyStore store) throws GeneralSecurityException {
    TrustManagerFactory f = TrustManagerFactory.getInstance("PKIX");
    f.init(store);
    for (TrustManager t : f.getTrustManagers()) {
      if (t instanceof X509ExtendedTrustManager x) {
        return x;
      }
    }
    throw new GeneralSecurityException("the JDK's PKIX trust manager factory made no X.509 one");
  }

  /** The context, for clients other than Pekko's ({@code java.net.http.HttpClient}). */
  public SSLContext sslContext() {
    return context;
  }

  /** Pekko HTTP's client context for {@code wss://} and {@code https://}. */
  public HttpsConnectionContext httpsContext() {
    return ConnectionContext.httpsClient(this::engine);
  }

  /** A client engine for {@code host:port}: the policy's versions, the host name checked. */
  public SSLEngine engine(String host, int port) {
    SSLEngine e = context.createSSLEngine(host, port);
    e.setUseClientMode(true);
    SSLParameters p = e.getSSLParameters();
    TlsPolicy.apply(p, e.getSupportedCipherSuites());
    p.setEndpointIdentificationAlgorithm("HTTPS");
    e.setSSLParameters(p);
    return e;
  }

  /** Which CAs are trusted, for a start-up line. */
  public String describe() {
    return description;
  }

  /**
   * The TLS refusal behind a failed connection to {@code host}: the verdict of the trust check
   * ({@code E-TLS-002..004}), or {@code E-TLS-005} for another handshake failure; empty when the
   * failure is not TLS's (a refused TCP connection, say).
   */
  public static Optional<TlsRefused> explain(Throwable failure, String host) {
    List<Throwable> chain = new ArrayList<>();
    for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
      chain.add(t);
    }
    for (Throwable t : chain) {
      if (t instanceof VerifyingTrustManager.CertificateRefused r) {
        return Optional.of(new TlsRefused(r.code, r.getMessage(), failure));
      }
    }
    for (Throwable t : chain) {
      if (t instanceof SSLException s) {
        return Optional.of(
            new TlsRefused(
                Code.E_TLS_005,
                "the TLS handshake with " + host + " failed: " + s.getMessage(),
                failure));
      }
    }
    return Optional.empty();
  }
}
