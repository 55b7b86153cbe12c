package io.capsule.hub;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.capsule.config.diag.Code;
import io.capsule.hub.http.ServerTls;
import io.capsule.protocol.ProtocolException.TlsRefused;
import io.capsule.protocol.tls.Pem;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Mutual TLS between the nodes of a hub cluster (docs/operations.md, "TLS on every wire"): Artery
 * over {@code tls-tcp} with Pekko's {@code RotatingKeysSSLEngineProvider}, which reads the node's
 * certificate, its key and the cluster's CA from PEM files, asks every connecting node for its
 * certificate (mutual TLS) and accepts only certificates the CA signed. After the handshake both
 * sides also check that the two certificates share a subject name (CN or a subjectAltName): give
 * every node's certificate one common name, such as {@code capsule-hub-cluster}. The provider
 * re-reads the files every {@code ssl-context-cache-ttl} (5 minutes), so rotated certificates are
 * used without a restart once the old and new ones overlap by more than that.
 *
 * <p>What Pekko's provider reads, checked here at start so a node with unusable files refuses to
 * start ({@code E-TLS-001}) instead of failing every handshake later: an RSA key (its PEM reader
 * knows no EC keys), unencrypted PKCS#1 or PKCS#8, belonging to the first certificate; a CA file
 * with at least one certificate; node certificates issued by that CA directly.
 *
 * @param cert the node's certificate (PEM)
 * @param key the node's RSA private key (PEM)
 * @param ca the cluster's CA certificate (PEM)
 */
public record ClusterTls(Path cert, Path key, Path ca) {
  private static final String PROVIDER =
      "org.apache.pekko.remote.artery.tcp.ssl.RotatingKeysSSLEngineProvider";

  public ClusterTls {
    Objects.requireNonNull(cert, "cert");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(ca, "ca");
  }

  /**
   * The files, checked now.
   *
   * @throws TlsRefused {@code E-TLS-001} naming the file and what Pekko could not use
   */
  public static ClusterTls checked(Path cert, Path key, Path ca) {
    ServerTls.fromFiles(cert, key); // a readable, matching pair
    if (!Pem.privateKey(key).getAlgorithm().equals("RSA")) {
      throw new TlsRefused(
          Code.E_TLS_001,
          key
              + " is not an RSA key; the cluster's transport (Pekko's rotating-keys TLS provider)"
              + " reads RSA keys only: openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072");
    }
    Pem.certificates(ca);
    return new ClusterTls(cert.toAbsolutePath(), key.toAbsolutePath(), ca.toAbsolutePath());
  }

  /**
   * The Pekko settings that put Artery on mutual TLS; layer them over {@link HubCluster#member}'s
   * (they replace its {@code transport = tcp}). TLS 1.3 only, with its AES-GCM suites: every node
   * runs this same build on a JDK that has them, so nothing older needs to be spoken.
   */
  public Config config() {
    String engine = "pekko.remote.artery.ssl.rotating-keys-engine.";
    return ConfigFactory.parseString(
            """
            pekko.remote.artery.transport = tls-tcp
            pekko.remote.artery.ssl.rotating-keys-engine {
              protocol = "TLSv1.3"
              enabled-algorithms = ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"]
            }
            """)
        .withValue(
            "pekko.remote.artery.ssl.ssl-engine-provider", ConfigValueFactory.fromAnyRef(PROVIDER))
        .withValue(engine + "key-file", ConfigValueFactory.fromAnyRef(key.toString()))
        .withValue(engine + "cert-file", ConfigValueFactory.fromAnyRef(cert.toString()))
        .withValue(engine + "ca-cert-file", ConfigValueFactory.fromAnyRef(ca.toString()));
  }
}
