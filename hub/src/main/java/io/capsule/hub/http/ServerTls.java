package io.capsule.hub.http;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TlsRefused;
import io.capsule.protocol.tls.TlsPolicy;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The hub edge's TLS (docs/operations.md, "TLS on every wire"): a certificate chain and its key
 * from PEM files ({@code capsule hub --tls-cert --tls-key}), re-read when the files change ({@link
 * KeyFiles}), TLS 1.2 and 1.3 with forward-secret AEAD suites only ({@link TlsPolicy}). HTTPS and
 * {@code wss://} are served on the one address; no client certificate is asked for (runners and API
 * clients authenticate with their bearer tokens, which TLS now hides).
 *
 * <p>Each loaded pair gets an {@link SSLContext} of its own: a client resuming a session of the
 * previous context cannot (that context's session keys are not this one's), so after a rotation
 * every new connection is a full handshake that shows the new certificate.
 *
 * <p>Thread-safe: {@link #engine()} is called once per accepted connection from any thread.
 */
public final class ServerTls {
  private record Served(KeyFiles.Pair pair, SSLContext context) {}

  private final KeyFiles files;
  private volatile Served served;

  private ServerTls(KeyFiles files) {
    this.files = files;
    this.served = contextFor(files.current());
  }

  /**
   * Reads {@code certFile} (the server's certificate first, then its chain) and {@code keyFile}.
   *
   * @throws TlsRefused {@code E-TLS-001} when they are not a usable, matching pair
   */
  public static ServerTls fromFiles(Path certFile, Path keyFile) {
    return new ServerTls(new KeyFiles(certFile, keyFile));
  }

  /** A server engine for one connection, with the policy's versions and suites. */
  SSLEngine engine() {
    SSLEngine e = current().context().createSSLEngine();
    e.setUseClientMode(false);
    TlsPolicy.apply(e);
    return e;
  }

  private Served current() {
    KeyFiles.Pair pair = files.current();
    Served s = served;
    if (s.pair() != pair) {
      synchronized (this) {
        s = served;
        if (s.pair() != pair) {
          s = contextFor(pair);
          served = s;
        }
      }
    }
    return s;
  }

  /** The certificate served now (after looking for changed files). */
  public X509Certificate certificate() {
    return current().pair().chain().get(0);
  }

  /** One line for the start-up output: whose certificate, until when. */
  public String describe() {
    X509Certificate c = certificate();
    return c.getSubjectX500Principal().getName() + ", valid until " + c.getNotAfter().toInstant();
  }

  private static Served contextFor(KeyFiles.Pair pair) {
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(new KeyManager[] {new OnePair(pair)}, null, null);
      return new Served(pair, ctx);
    } catch (GeneralSecurityException e) {
      throw new TlsRefused(Code.E_TLS_001, "cannot make a TLS context: " + e, e);
    }
  }

  /** A server key manager of one certificate chain and key. */
  private static final class OnePair extends X509ExtendedKeyManager {
    private static final String ALIAS = "edge";
    private final KeyFiles.Pair pair;

    OnePair(KeyFiles.Pair pair) {
      this.pair = pair;
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
      return chooseServerAlias(keyType, issuers, null);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return pair.key().getAlgorithm().equals(keyType) ? ALIAS : null;
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      String a = chooseServerAlias(keyType, issuers, null);
      return a == null ? null : new String[] {a};
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return ALIAS.equals(alias) ? pair.chain().toArray(X509Certificate[]::new) : null;
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return ALIAS.equals(alias) ? pair.key() : null;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return null; // a server's key manager: it never acts as a client
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return null;
    }
  }
}
