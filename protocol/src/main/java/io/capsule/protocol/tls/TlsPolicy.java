package io.capsule.protocol.tls;

import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * The protocol versions and cipher suites every TLS wire of the project uses, both ends: TLS 1.3
 * and 1.2 only (1.0 and 1.1 are broken and deprecated by RFC 8996), and only suites with forward
 * secrecy and an AEAD cipher — TLS 1.3's own, and 1.2's ECDHE with AES-GCM or ChaCha20-Poly1305
 * (Mozilla's "intermediate" list, which every current client speaks). The JDK's order among them is
 * kept (it prefers the strongest the peer has).
 */
public final class TlsPolicy {
  public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  private TlsPolicy() {}

  /** Whether {@code suite} is one this policy allows. */
  public static boolean allowed(String suite) {
    if (suite.startsWith("TLS_AES_") || suite.startsWith("TLS_CHACHA20_")) {
      return true; // TLS 1.3: all AEAD, all forward secret
    }
    return suite.startsWith("TLS_ECDHE_")
        && (suite.contains("_WITH_AES_128_GCM_")
            || suite.contains("_WITH_AES_256_GCM_")
            || suite.contains("_WITH_CHACHA20_POLY1305_"));
  }

  /** Applies the policy to a fresh engine (server or client). */
  public static void apply(SSLEngine engine) {
    SSLParameters p = engine.getSSLParameters();
    apply(p, engine.getSupportedCipherSuites());
    engine.setSSLParameters(p);
  }

  /** Restricts {@code params} to the policy's protocols and the allowed ones of {@code suites}. */
  public static void apply(SSLParameters params, String[] suites) {
    params.setProtocols(PROTOCOLS.toArray(String[]::new));
    params.setCipherSuites(Arrays.stream(suites).filter(TlsPolicy::allowed).toArray(String[]::new));
  }
}
