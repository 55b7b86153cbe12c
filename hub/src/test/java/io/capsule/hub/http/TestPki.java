package io.capsule.hub.http;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A throwaway certificate authority made with the JDK alone: keys from {@link KeyPairGenerator},
 * X.509 v3 certificates written here in DER (the few structures RFC 5280 needs: names of one CN,
 * UTCTime validity, subjectAltName, basicConstraints, keyUsage) and signed with {@link Signature}.
 * No tool process and no file checked in: each test makes the CA, the expired certificate and the
 * one for another host it needs, in milliseconds.
 */
public final class TestPki {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final DateTimeFormatter UTC_TIME =
      DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'").withZone(ZoneOffset.UTC);

  /** A certificate and its key. */
  public record Issued(X509Certificate cert, PrivateKey key) {
    /** Writes the certificate, then {@code chain}, as PEM to {@code file}. */
    public Path writeCert(Path file, X509Certificate... chain) throws IOException {
      StringBuilder pem = new StringBuilder(pem("CERTIFICATE", encoded(cert)));
      for (X509Certificate c : chain) {
        pem.append(pem("CERTIFICATE", encoded(c)));
      }
      return Files.writeString(file, pem.toString());
    }

    /** Writes the key as PKCS#8 PEM ({@code PRIVATE KEY}), as {@code openssl genpkey} does. */
    public Path writeKey(Path file) throws IOException {
      return Files.writeString(file, pem("PRIVATE KEY", key.getEncoded()));
    }
  }

  private final Issued ca;
  private final String algorithm;

  private TestPki(Issued ca, String algorithm) {
    this.ca = ca;
    this.algorithm = algorithm;
  }

  /** A self-signed CA named {@code cn} with an {@code "EC"} (P-256) or {@code "RSA"} key. */
  public static TestPki ca(String cn, String algorithm) throws GeneralSecurityException {
    KeyPair keys = keys(algorithm);
    Instant now = Instant.now();
    X509Certificate cert =
        sign(
            cn,
            cn,
            keys,
            keys.getPrivate(),
            now.minus(Duration.ofHours(1)),
            now.plus(Duration.ofDays(3650)),
            List.of(),
            true);
    return new TestPki(new Issued(cert, keys.getPrivate()), algorithm);
  }

  public X509Certificate cert() {
    return ca.cert();
  }

  /** Writes the CA's certificate as PEM. */
  public Path writeCa(Path file) throws IOException {
    return Files.writeString(file, pem("CERTIFICATE", encoded(ca.cert())));
  }

  /** A fresh key of {@code algorithm}: {@code "EC"} (P-256) or {@code "RSA"} (2048 bits). */
  public static KeyPair keys(String algorithm) throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
    g.initialize(algorithm.equals("RSA") ? 2048 : 256);
    return g.generateKeyPair();
  }

  /**
   * A certificate for {@code names} (DNS names, or IP literals), valid for a year from an hour ago.
   */
  public Issued issue(String cn, List<String> names) throws GeneralSecurityException {
    Instant now = Instant.now();
    return issue(cn, names, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(365)));
  }

  /** A certificate for {@code names} valid in [{@code from}, {@code until}], with a fresh key. */
  public Issued issue(String cn, List<String> names, Instant from, Instant until)
      throws GeneralSecurityException {
    KeyPair keys = keys(algorithm);
    X509Certificate cert =
        sign(
            cn,
            ca.cert().getSubjectX500Principal().getName().substring(3),
            keys,
            ca.key(),
            from,
            until,
            names,
            false);
    return new Issued(cert, keys.getPrivate());
  }

  private static X509Certificate sign(
      String subject,
      String issuer,
      KeyPair keys,
      PrivateKey signer,
      Instant from,
      Instant until,
      List<String> names,
      boolean isCa)
      throws GeneralSecurityException {
    byte[] algId =
        signer.getAlgorithm().equals("RSA")
            ? seq(oid("2A864886F70D01010B"), new byte[] {0x05, 0x00}) // sha256WithRSAEncryption
            : seq(oid("2A8648CE3D040302")); // ecdsa-with-SHA256
    List<byte[]> extensions = new ArrayList<>();
    extensions.add(
        ext("551D13", true, isCa ? seq(new byte[] {0x01, 0x01, (byte) 0xFF}) : seq())); // basic
    extensions.add(
        ext(
            "551D0F", // keyUsage: keyCertSign+cRLSign, or digitalSignature+keyEncipherment
            true,
            isCa
                ? new byte[] {0x03, 0x02, 0x01, 0x06}
                : new byte[] {0x03, 0x02, 0x05, (byte) 0xA0}));
    if (!names.isEmpty()) {
      List<byte[]> general = new ArrayList<>();
      for (String n : names) {
        general.add(
            n.matches("[0-9.]+")
                ? tlv(0x87, ip(n)) // iPAddress
                : tlv(0x82, n.getBytes(StandardCharsets.US_ASCII))); // dNSName
      }
      extensions.add(ext("551D11", false, seq(general.toArray(byte[][]::new)))); // subjectAltName
    }
    byte[] serial = new BigInteger(63, RANDOM).add(BigInteger.ONE).toByteArray();
    byte[] tbs =
        seq(
            tlv(0xA0, tlv(0x02, new byte[] {2})), // v3
            tlv(0x02, serial),
            algId,
            name(issuer),
            seq(time(from), time(until)),
            name(subject),
            keys.getPublic().getEncoded(),
            tlv(0xA3, seq(extensions.toArray(byte[][]::new))));
    Signature s =
        Signature.getInstance(
            signer.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA");
    s.initSign(signer);
    s.update(tbs);
    byte[] sig = s.sign();
    byte[] bits = new byte[sig.length + 1];
    System.arraycopy(sig, 0, bits, 1, sig.length);
    byte[] der = seq(tbs, algId, tlv(0x03, bits));
    return (X509Certificate)
        CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
  }

  private static byte[] ext(String oidHex, boolean critical, byte[] value) {
    return critical
        ? seq(oid(oidHex), new byte[] {0x01, 0x01, (byte) 0xFF}, tlv(0x04, value))
        : seq(oid(oidHex), tlv(0x04, value));
  }

  private static byte[] name(String cn) {
    return seq(tlv(0x31, seq(oid("550403"), tlv(0x0C, cn.getBytes(StandardCharsets.UTF_8)))));
  }

  private static byte[] time(Instant t) {
    return tlv(0x17, UTC_TIME.format(t).getBytes(StandardCharsets.US_ASCII));
  }

  private static byte[] ip(String literal) {
    try {
      return InetAddress.getByName(literal).getAddress();
    } catch (IOException e) {
      throw new IllegalArgumentException(literal, e);
    }
  }

  private static byte[] oid(String hex) {
    return tlv(0x06, java.util.HexFormat.of().parseHex(hex));
  }

  private static byte[] seq(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return tlv(0x30, out.toByteArray());
  }

  static byte[] tlv(int tag, byte[] value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(tag);
    int n = value.length;
    if (n < 0x80) {
      out.write(n);
    } else if (n < 0x100) {
      out.write(0x81);
      out.write(n);
    } else {
      out.write(0x82);
      out.write(n >>> 8);
      out.write(n);
    }
    out.writeBytes(value);
    return out.toByteArray();
  }

  private static byte[] encoded(X509Certificate c) {
    try {
      return c.getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code der} as a PEM block. */
  public static String pem(String label, byte[] der) {
    return "-----BEGIN "
        + label
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + label
        + "-----\n";
  }
}
