package io.capsule.realharness;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A throwaway certificate authority and a server certificate for {@code 127.0.0.1} and {@code
 * localhost} signed by it, made with the JDK's {@code keytool} (no extra dependency, nothing
 * checked in). A harness that must reach its backend over HTTPS (Codex routes a ChatGPT sign-in's
 * requests to an {@code https} origin only) trusts {@link #caPem()}; the fake serves with {@link
 * #serverContext()}. The CA is a separate certificate because rustls refuses a self-signed server
 * certificate used as its own trust anchor ({@code CaUsedAsEndEntity}).
 */
final class FakeTls {
  private static final String PASSWORD = "capsule-fake";
  private static final java.time.Duration KEYTOOL_TIMEOUT = java.time.Duration.ofSeconds(60);

  private final Path caPem;
  private final Path serverStore;

  private FakeTls(Path caPem, Path serverStore) {
    this.caPem = caPem;
    this.serverStore = serverStore;
  }

  /** Makes the CA and the server certificate under {@code dir}. */
  static FakeTls create(Path dir) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    Path ca = dir.resolve("ca.p12");
    Path server = dir.resolve("server.p12");
    Path caPem = dir.resolve("ca.pem");
    Path csr = dir.resolve("server.csr");
    Path signed = dir.resolve("server.pem");
    keytool(
        "-genkeypair",
        "-keystore",
        ca,
        "-alias",
        "ca",
        "-dname",
        "CN=capsule-fake-ca",
        "-ext",
        "bc:c=ca:true",
        "-ext",
        "ku:c=keyCertSign,cRLSign");
    keytool("-exportcert", "-keystore", ca, "-alias", "ca", "-rfc", "-file", caPem);
    keytool("-genkeypair", "-keystore", server, "-alias", "server", "-dname", "CN=localhost");
    keytool("-certreq", "-keystore", server, "-alias", "server", "-file", csr);
    keytool(
        "-gencert",
        "-keystore",
        ca,
        "-alias",
        "ca",
        "-infile",
        csr,
        "-outfile",
        signed,
        "-rfc",
        "-ext",
        "san=ip:127.0.0.1,dns:localhost",
        "-ext",
        "eku=serverAuth",
        "-ext",
        "bc=ca:false");
    // The reply is installed only when its issuer is known: the CA first, then the chain.
    keytool("-importcert", "-keystore", server, "-alias", "ca", "-file", caPem, "-noprompt");
    keytool("-importcert", "-keystore", server, "-alias", "server", "-file", signed);
    return new FakeTls(caPem, server);
  }

  /** The CA certificate in PEM, for the harness to trust. */
  Path caPem() {
    return caPem;
  }

  /** A TLS context serving the signed certificate (with its chain). */
  SSLContext serverContext() throws IOException {
    try (InputStream in = Files.newInputStream(serverStore)) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(in, PASSWORD.toCharArray());
      KeyManagerFactory keys =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, PASSWORD.toCharArray());
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), null, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IOException("could not load the fake server's certificate", e);
    }
  }

  private static void keytool(Object... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    for (Object a : args) {
      cmd.add(a.toString());
    }
    if (args[0].equals("-genkeypair")) {
      cmd.addAll(List.of("-keyalg", "RSA", "-keysize", "2048", "-validity", "3650"));
    }
    cmd.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(KEYTOOL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly().waitFor();
      throw new IOException("keytool did not finish within " + KEYTOOL_TIMEOUT + ": " + cmd);
    }
    if (p.exitValue() != 0) {
      throw new IOException(
          "keytool failed ("
              + p.exitValue()
              + "): "
              + cmd
              + "\n"
              + new String(out, StandardCharsets.UTF_8));
    }
  }
}
