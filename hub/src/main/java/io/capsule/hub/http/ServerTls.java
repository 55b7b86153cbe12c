package io.capsule.hub.http;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TlsRefused;
import io.capsule.protocol.tls.TlsPolicy;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;

/**
 * The hub edge's TLS (docs/operations.md, "TLS on every wire"): a certificate chain and its key
 * from PEM files ({@code capsule hub --tls-cert --tls-key}), re-read when the files change ({@link
 * ReloadingKeyManager}), TLS 1.2 and 1.3 with forward-secret AEAD suites only ({@link TlsPolicy}).
 * HTTPS and {@code wss://} are served on the one address; no client certificate is asked for
 * (runners and API clients authenticate with their bearer tokens, which TLS now hides).
 *
 * <p>Thread-safe: {@link #engine()} is called once per accepted connection from any thread.
 */
public final class ServerTls {
  private final SSLContext context;
  private final ReloadingKeyManager keys;

  private ServerTls(SSLContext context, ReloadingKeyManager keys) {
    this.context = context;
    this.keys = keys;
  }

  /**
   * Reads {@code certFile} (the server's certificate first, then its chain) and {@code keyFile}.
   *
   * @throws TlsRefused {@code E-TLS-001} when they are not a usable, matching pair
   */
  public static ServerTls fromFiles(Path certFile, Path keyFile) {
    ReloadingKeyManager keys = new ReloadingKeyManager(certFile, keyFile);
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(new KeyManager[] {keys}, null, null);
      return new ServerTls(ctx, keys);
    } catch (GeneralSecurityException e) {
      throw new TlsRefused(Code.E_TLS_001, "cannot make a TLS context: " + e, e);
    }
  }

  /** A server engine for one connection, with the policy's versions and suites. */
  SSLEngine engine() {
    SSLEngine e = context.createSSLEngine();
    e.setUseClientMode(false);
    TlsPolicy.apply(e);
    return e;
  }

  /** The certificate served now (after looking for changed files). */
  public X509Certificate certificate() {
    return keys.served().chain().get(0);
  }

  /** One line for the start-up output: whose certificate, until when. */
  public String describe() {
    X509Certificate c = certificate();
    return c.getSubjectX500Principal().getName() + ", valid until " + c.getNotAfter().toInstant();
  }
}
