package io.capsule.hub.http;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TlsRefused;
import io.capsule.protocol.tls.Pem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The edge's certificate and key, read from two PEM files and read again when either changes, so a
 * rotated certificate is served from the next handshake on without a restart (docs/operations.md,
 * "Rotating certificates"). Each handshake looks at both files' modification time and size (two
 * {@code stat} calls, microseconds); only a change reads them. A pair that does not load — a file
 * half written, a key that does not match the certificate, as between writing the one and the other
 * — is not used: the previous pair is served, {@code W-TLS-003} is logged once for that state of
 * the files, and the next change is tried again.
 *
 * <p>Threading: called from any thread. The served pair is one immutable {@link Pair} behind a
 * volatile; a reload is serialized.
 */
final class KeyFiles {
  private static final Logger LOG = LoggerFactory.getLogger(KeyFiles.class);

  /** What the files looked like when last read: a change of either means read again. */
  private record Stamp(long certModified, long certSize, long keyModified, long keySize) {}

  /** One loaded certificate chain and its key. */
  record Pair(List<X509Certificate> chain, PrivateKey key, Stamp stamp) {}

  private final Path certFile;
  private final Path keyFile;
  private volatile Pair current;
  private volatile Stamp failed;

  /**
   * Reads the pair now.
   *
   * @throws TlsRefused {@code E-TLS-001} when the files do not hold a usable, matching pair
   */
  KeyFiles(Path certFile, Path keyFile) {
    this.certFile = Objects.requireNonNull(certFile, "certFile");
    this.keyFile = Objects.requireNonNull(keyFile, "keyFile");
    this.current = load(stamp());
  }

  /** The pair to serve now (read again first when the files changed). */
  Pair current() {
    refreshIfChanged();
    return current;
  }

  private void refreshIfChanged() {
    Stamp now;
    try {
      now = stamp();
    } catch (TlsRefused e) {
      return; // a file is missing for a moment (being replaced): keep serving
    }
    if (now.equals(current.stamp()) || now.equals(failed)) {
      return;
    }
    synchronized (this) {
      if (now.equals(current.stamp()) || now.equals(failed)) {
        return;
      }
      try {
        Pair next = load(now);
        current = next;
        failed = null;
        LOG.info(
            "TLS certificate reloaded from {}: {} (valid until {})",
            certFile,
            next.chain().get(0).getSubjectX500Principal().getName(),
            next.chain().get(0).getNotAfter().toInstant());
      } catch (TlsRefused e) {
        failed = now;
        LOG.warn(
            "{} {}; still serving {}",
            Code.W_TLS_003.id(),
            e.getMessage(),
            current.chain().get(0).getSubjectX500Principal().getName());
      }
    }
  }

  private Stamp stamp() {
    try {
      BasicFileAttributes c = Files.readAttributes(certFile, BasicFileAttributes.class);
      BasicFileAttributes k = Files.readAttributes(keyFile, BasicFileAttributes.class);
      return new Stamp(
          c.lastModifiedTime().toMillis(), c.size(), k.lastModifiedTime().toMillis(), k.size());
    } catch (IOException e) {
      throw new TlsRefused(Code.E_TLS_001, "cannot read " + certFile + " or " + keyFile + ": " + e);
    }
  }

  private Pair load(Stamp stamp) {
    List<X509Certificate> chain = Pem.certificates(certFile);
    PrivateKey key = Pem.privateKey(keyFile);
    if (!matches(key, chain.get(0).getPublicKey())) {
      throw new TlsRefused(
          Code.E_TLS_001, keyFile + " is not the key of the first certificate in " + certFile);
    }
    return new Pair(chain, key, stamp);
  }

  /** Whether {@code key} signs what {@code pub} verifies (RSA, EC, EdDSA alike). */
  private static boolean matches(PrivateKey key, PublicKey pub) {
    if (!key.getAlgorithm().equals(pub.getAlgorithm())) {
      return false;
    }
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> key.getAlgorithm(); // Ed25519, Ed448, EdDSA
        };
    byte[] probe = "capsule edge key check".getBytes(StandardCharsets.US_ASCII);
    try {
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key);
      s.update(probe);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(algorithm);
      v.initVerify(pub);
      v.update(probe);
      return v.verify(sig);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }
}
