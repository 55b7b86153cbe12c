package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TlsRefused;
import io.capsule.protocol.tls.Pem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The private-key forms the edge reads ({@link Pem}): PKCS#8 as the JDK and {@code openssl genpkey}
 * write it, PKCS#1 ({@code RSA PRIVATE KEY}), SEC1 ({@code EC PRIVATE KEY} with its curve); and the
 * files it refuses with {@code E-TLS-001}. The openssl rows run where openssl is installed (it is
 * on the project's machine kind); the JDK rows everywhere.
 */
class PemKeysTest {
  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @CsvSource({"RSA", "EC"})
  void aPkcs8KeyIsReadAsTheJdkWroteIt(String algorithm) throws Exception {
    KeyPair keys = TestPki.keys(algorithm);
    Path file =
        Files.writeString(
            dir.resolve("k.pem"), TestPki.pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
    assertEquals(keys.getPrivate(), Pem.privateKey(file));
  }

  @Test
  void aPkcs1RsaKeyIsRead() throws Exception {
    KeyPair keys = TestPki.keys("RSA");
    // PKCS#8 wraps PKCS#1 in its last field, an OCTET STRING: take it out, as openssl -traditional.
    byte[] pkcs8 = keys.getPrivate().getEncoded();
    byte[] pkcs1 = lastOctetString(pkcs8);
    Path file = Files.writeString(dir.resolve("rsa.pem"), TestPki.pem("RSA PRIVATE KEY", pkcs1));
    assertEquals(keys.getPrivate(), Pem.privateKey(file));
  }

  /** openssl's own output, each form it writes by default or on request. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          genpkey RSA (PKCS#8)        | genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 | RSA
          genrsa -traditional (PKCS#1)| genrsa -traditional 2048                            | RSA
          ecparam -genkey (SEC1)      | ecparam -name prime256v1 -genkey                    | EC
          genpkey EC (PKCS#8)         | genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 | EC
          genpkey Ed25519 (PKCS#8)    | genpkey -algorithm ed25519                          | EdDSA
          """)
  void opensslKeysAreRead(String row, String args, String algorithm) throws Exception {
    Path openssl = Path.of("/usr/bin/openssl");
    assumeTrue(Files.isExecutable(openssl), "openssl is not installed here");
    Path file = dir.resolve("openssl.pem");
    List<String> cmd = new java.util.ArrayList<>(List.of(openssl.toString()));
    List<String> words = Arrays.asList(args.trim().split("\\s+"));
    cmd.add(words.get(0)); // the subcommand, then -out (genrsa wants its bit count last)
    cmd.addAll(List.of("-out", file.toString()));
    cmd.addAll(words.subList(1, words.size()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertEquals(true, p.waitFor(60, TimeUnit.SECONDS), "openssl finished");
    assertEquals(0, p.exitValue(), out);
    PrivateKey key = Pem.privateKey(file);
    assertEquals(algorithm, key.getAlgorithm(), row);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          no key block       | -----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\\n
          an encrypted key   | -----BEGIN ENCRYPTED PRIVATE KEY-----\\nAAAA\\n-----END ENCRYPTED PRIVATE KEY-----\\n
          not a key inside   | -----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n
          """)
  void unusableKeyFilesAreRefusedWithTheirCode(String row, String text) throws Exception {
    Path file = Files.writeString(dir.resolve("bad.pem"), text.replace("\\n", "\n"));
    TlsRefused e = assertThrows(TlsRefused.class, () -> Pem.privateKey(file), row);
    assertEquals(Code.E_TLS_001, e.code());
  }

  @Test
  void aKeyThatIsNotTheCertificatesIsRefusedAtStart() throws Exception {
    TestPki pki = TestPki.ca("ca", "EC");
    TestPki.Issued a = pki.issue("a", List.of("127.0.0.1"));
    TestPki.Issued b = pki.issue("b", List.of("127.0.0.1"));
    Path cert = a.writeCert(dir.resolve("a.pem"));
    Path key = b.writeKey(dir.resolve("b.key"));
    TlsRefused e = assertThrows(TlsRefused.class, () -> ServerTls.fromFiles(cert, key));
    assertEquals(Code.E_TLS_001, e.code());
  }

  /** The content of the last top-level field of a DER SEQUENCE, when it is an OCTET STRING. */
  private static byte[] lastOctetString(byte[] der) {
    int pos = 1;
    int len = der[pos++] & 0xFF;
    if (len >= 0x80) {
      pos += len & 0x7F;
    }
    byte[] last = null;
    while (pos < der.length) {
      int tag = der[pos++] & 0xFF;
      int l = der[pos++] & 0xFF;
      if (l >= 0x80) {
        int n = l & 0x7F;
        l = 0;
        for (int i = 0; i < n; i++) {
          l = (l << 8) | (der[pos++] & 0xFF);
        }
      }
      if (tag == 0x04) {
        last = Arrays.copyOfRange(der, pos, pos + l);
      }
      pos += l;
    }
    return last;
  }
}
