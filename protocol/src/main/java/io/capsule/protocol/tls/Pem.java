package io.capsule.protocol.tls;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TlsRefused;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM files as certificate tooling writes them, read with the JDK alone: certificates ({@code
 * CERTIFICATE}, several to a file for a chain or a CA bundle) and unencrypted private keys in the
 * three forms {@code openssl} writes — PKCS#8 ({@code PRIVATE KEY}: RSA, EC, Ed25519), PKCS#1
 * ({@code RSA PRIVATE KEY}, {@code openssl genrsa -traditional}) and SEC1 ({@code EC PRIVATE KEY},
 * {@code openssl ecparam -genkey}). The JDK's {@link KeyFactory} reads only PKCS#8, so the other
 * two are wrapped into a PKCS#8 structure first (a few bytes of DER written here). Text around the
 * blocks ({@code openssl x509 -text} output, {@code EC PARAMETERS} blocks) is ignored.
 *
 * <p>Every failure is a {@link TlsRefused} {@code E-TLS-001} naming the file and what is wrong.
 * Pure and thread-safe.
 */
public final class Pem {
  private static final Pattern BLOCK =
      Pattern.compile(
          "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----", Pattern.DOTALL);

  /** {@code 1.2.840.113549.1.1.1} rsaEncryption, as a DER OID. */
  private static final byte[] RSA_OID = {
    0x06, 0x09, 0x2A, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xF7, 0x0D, 0x01, 0x01, 0x01
  };

  /** {@code 1.2.840.10045.2.1} id-ecPublicKey, as a DER OID. */
  private static final byte[] EC_OID = {
    0x06, 0x07, 0x2A, (byte) 0x86, 0x48, (byte) 0xCE, 0x3D, 2, 1
  };

  private static final byte[] DER_NULL = {0x05, 0x00};
  private static final byte[] VERSION_0 = {0x02, 0x01, 0x00};

  /** The algorithms a PKCS#8 key is tried as, in order (the structure names it, KeyFactory not). */
  private static final List<String> ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448");

  private Pem() {}

  /** One block of a PEM file: its label and its DER bytes. */
  record Block(String label, byte[] der) {}

  /**
   * Every certificate in {@code file}, in file order (a server's own first, then its chain).
   *
   * @throws TlsRefused {@code E-TLS-001} when the file cannot be read or holds no certificate
   */
  public static List<X509Certificate> certificates(Path file) {
    List<X509Certificate> certs = new ArrayList<>();
    try {
      CertificateFactory x509 = CertificateFactory.getInstance("X.509");
      for (Block b : blocks(file)) {
        if (b.label().equals("CERTIFICATE") || b.label().equals("TRUSTED CERTIFICATE")) {
          certs.add((X509Certificate) x509.generateCertificate(new ByteArrayInputStream(b.der())));
        }
      }
    } catch (CertificateException e) {
      throw refused(file, "holds a certificate that cannot be read: " + e.getMessage(), e);
    }
    if (certs.isEmpty()) {
      throw refused(file, "holds no -----BEGIN CERTIFICATE----- block", null);
    }
    return List.copyOf(certs);
  }

  /**
   * The first private key in {@code file}.
   *
   * @throws TlsRefused {@code E-TLS-001} when there is none, it is encrypted, or it cannot be read
   */
  public static PrivateKey privateKey(Path file) {
    for (Block b : blocks(file)) {
      switch (b.label()) {
        case "PRIVATE KEY":
          return pkcs8(file, b.der(), ALGORITHMS);
        case "RSA PRIVATE KEY":
          return pkcs8(file, wrap(b.der(), seq(RSA_OID, DER_NULL)), List.of("RSA"));
        case "EC PRIVATE KEY":
          return pkcs8(file, wrap(b.der(), seq(EC_OID, curveOf(file, b.der()))), List.of("EC"));
        case "ENCRYPTED PRIVATE KEY":
          throw refused(
              file,
              "holds an encrypted private key; the hub reads unencrypted keys (protect the file"
                  + " with its permissions): openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pem",
              null);
        default:
          // certificates or parameters beside the key
      }
    }
    throw refused(file, "holds no -----BEGIN PRIVATE KEY----- block (nor RSA or EC)", null);
  }

  static List<Block> blocks(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw refused(file, "cannot be read: " + e, e);
    }
    List<Block> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String label = m.group(1);
      String body = m.group(2);
      if (label.equals("RSA PRIVATE KEY") && body.contains(":")) {
        throw refused(file, "holds a passphrase-protected key (Proc-Type header)", null);
      }
      try {
        out.add(new Block(label, Base64.getMimeDecoder().decode(body)));
      } catch (IllegalArgumentException e) {
        throw refused(file, "has a " + label + " block that is not base64: " + e.getMessage(), e);
      }
    }
    return out;
  }

  private static PrivateKey pkcs8(Path file, byte[] der, List<String> algorithms) {
    GeneralSecurityException last = null;
    for (String algorithm : algorithms) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        last = e;
      }
    }
    throw refused(
        file, "holds a private key that is not RSA, EC or EdDSA, or is damaged: " + last, last);
  }

  /**
   * The named curve of a SEC1 {@code ECPrivateKey}: {@code SEQUENCE { INTEGER 1, OCTET STRING, [0]
   * OID, [1] BIT STRING }}, as openssl writes it (with the optional parameters present).
   */
  private static byte[] curveOf(Path file, byte[] sec1) {
    try {
      Der.Reader seq = Der.Reader.of(sec1).enter(0x30);
      seq.skip(0x02);
      seq.skip(0x04);
      if (seq.hasMore() && seq.peekTag() == 0xA0) {
        Der.Reader params = seq.enter(0xA0);
        if (params.hasMore() && params.peekTag() == 0x06) {
          return params.raw();
        }
      }
    } catch (IllegalArgumentException e) {
      throw refused(file, "holds an EC PRIVATE KEY that is not DER: " + e.getMessage(), e);
    }
    throw refused(
        file,
        "holds an EC PRIVATE KEY without its named curve; write it as PKCS#8 (openssl pkcs8 -topk8"
            + " -nocrypt)",
        null);
  }

  /** PKCS#8 {@code PrivateKeyInfo { 0, algorithm, OCTET STRING key }}. */
  private static byte[] wrap(byte[] key, byte[] algorithm) {
    return Der.tlv(0x30, concat(VERSION_0, algorithm, Der.tlv(0x04, key)));
  }

  private static byte[] seq(byte[]... parts) {
    return Der.tlv(0x30, concat(parts));
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  private static TlsRefused refused(Path file, String what, Throwable cause) {
    return new TlsRefused(Code.E_TLS_001, file + " " + what, cause);
  }
}
