package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.Await;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.tls.ClientTls;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.RunnerClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The hub's edge over TLS, on real sockets with a CA this test makes: the API over HTTPS and a
 * runner over {@code wss://} trusting the test CA through {@link ClientTls} (as {@code --ca-file}
 * does); a certificate from an unknown CA, an expired one and one for another host each refused by
 * the runner with its code, naming the host; no plain HTTP on the TLS port; a rotated certificate
 * served from the next handshake, and a half-written rotation never served.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EdgeTlsTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final ProjectTokens TOKENS =
      new ProjectTokens(
          "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8),
          Duration.ofSeconds(5));

  @TempDir static Path dir;

  private ActorTestKit kit;
  private TestPki pki;
  private Path caFile;
  private ClientTls trust;

  @BeforeAll
  void start() throws Exception {
    kit =
        ActorTestKit.create("edge-tls", HubCluster.singleNode().withFallback(ConfigFactory.load()));
    // A cluster of one, joined as a hub on a store joins it (a node never joined is cut off).
    HubCluster.joinSelfIfAlone(kit.system());
    pki = TestPki.ca("capsule-test-ca", "EC");
    caFile = pki.writeCa(dir.resolve("ca.pem"));
    trust = ClientTls.trusting(Optional.of(caFile));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void apiOverHttpsAndARunnerOverWssTrustTheTestCa() throws Exception {
    TestPki.Issued server = pki.issue("hub", List.of("127.0.0.1", "localhost"));
    ServerTls tls =
        ServerTls.fromFiles(
            server.writeCert(dir.resolve("hub.pem"), pki.cert()),
            server.writeKey(dir.resolve("hub.key")));
    ReferenceHub hub =
        ReferenceHub.start(
                kit.system(),
                ProtocolConfig.builder().build(),
                TOKENS,
                "p-tls",
                "127.0.0.1",
                0,
                HubJournal.none(),
                Optional.empty(),
                Optional.of(tls))
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    RunnerClient runner = null;
    try {
      assertTrue(hub.apiUrl().startsWith("https://127.0.0.1:"), hub.apiUrl());
      assertTrue(hub.runnerUrl().startsWith("wss://127.0.0.1:"), hub.runnerUrl());

      HttpResponse<String> health = get(hub.apiUrl() + "/healthz");
      assertEquals(200, health.statusCode());
      assertEquals(server.cert(), health.sslSession().orElseThrow().getPeerCertificates()[0]);
      String apiToken =
          TOKENS.issue(
              "p-tls",
              Optional.empty(),
              io.capsule.protocol.token.TokenScope.API,
              Duration.ofMinutes(5));
      HttpResponse<String> tasks =
          client()
              .send(
                  HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks"))
                      .header("Authorization", "Bearer " + apiToken)
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertEquals(200, tasks.statusCode(), tasks.body());

      // The TLS port speaks nothing else: a plain request gets no HTTP answer.
      String plain = hub.apiUrl().replace("https://", "http://") + "/healthz";
      assertThrows(
          IOException.class,
          () ->
              HttpClient.newBuilder()
                  .connectTimeout(WAIT)
                  .build()
                  .send(
                      HttpRequest.newBuilder(URI.create(plain)).timeout(WAIT).build(),
                      HttpResponse.BodyHandlers.ofString()));

      runner = dial(hub.runnerUrl(), trust);
      RunnerClient r = runner;
      Await.until(
          r::connectionState,
          s -> s.status() == ConnectionState.Status.CONNECTED,
          WAIT,
          "the runner connected over wss://");
    } finally {
      if (runner != null) {
        runner.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  /** Each certificate that does not verify is refused by the runner with its code and the host. */
  @ParameterizedTest(name = "{0} → {1}")
  @CsvSource(
      textBlock =
          """
          unknown CA,     E-TLS-002, is issued by CN=another-ca
          expired,        E-TLS-003, expired on
          another host,   E-TLS-004, names elsewhere.example
          """)
  void aCertificateThatDoesNotVerifyIsRefusedWithItsCode(String row, String code, String why)
      throws Exception {
    Instant now = Instant.now();
    TestPki.Issued served =
        switch (row) {
          case "unknown CA" -> TestPki.ca("another-ca", "EC").issue("hub", List.of("127.0.0.1"));
          case "expired" ->
              pki.issue(
                  "hub",
                  List.of("127.0.0.1"),
                  now.minus(Duration.ofDays(30)),
                  now.minus(Duration.ofDays(1)));
          default -> pki.issue("hub", List.of("elsewhere.example"));
        };
    String name = row.replace(' ', '-');
    ServerTls tls =
        ServerTls.fromFiles(
            served.writeCert(dir.resolve(name + ".pem")),
            served.writeKey(dir.resolve(name + ".key")));
    GuardedBinding binding = bindOk(tls);
    RunnerClient runner =
        dial("wss://127.0.0.1:" + binding.localAddress().getPort() + "/v1/runner", trust);
    try {
      ConnectionState refused =
          Await.until(
              runner::connectionState,
              s -> s.status() == ConnectionState.Status.DISCONNECTED,
              WAIT,
              "the runner refused the " + row + " certificate");
      String reason = refused.reason().orElseThrow();
      assertTrue(reason.startsWith(code + " "), reason);
      assertTrue(reason.contains("127.0.0.1:" + binding.localAddress().getPort()), reason);
      assertTrue(reason.contains(why), reason);
    } finally {
      runner.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
      binding.terminate().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void wssToAPlainHubIsRefusedAsAFailedHandshakeNotSpokenInClear() throws Exception {
    GuardedBinding plain =
        GuardedBinding.bind(
                kit.system(),
                "127.0.0.1",
                0,
                org.apache.pekko.http.javadsl.server.Directives.complete("ok"),
                GuardedBinding.Limits.fromConfig(kit.system().settings().config()))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    String url = "wss://127.0.0.1:" + plain.localAddress().getPort() + "/v1/runner";
    RunnerClient runner = dial(url, trust);
    try {
      ConnectionState refused =
          Await.until(
              runner::connectionState,
              s -> s.status() == ConnectionState.Status.DISCONNECTED,
              WAIT,
              "the runner gave up the handshake with a plain server");
      String reason = refused.reason().orElseThrow();
      assertTrue(reason.startsWith("E-TLS-005 the TLS handshake with " + url), reason);
    } finally {
      runner.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
      plain.terminate().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aRotatedCertificateIsServedFromTheNextHandshakeAndAHalfWrittenOneNever() throws Exception {
    Path certFile = dir.resolve("rotating.pem");
    Path keyFile = dir.resolve("rotating.key");
    TestPki.Issued first = pki.issue("first", List.of("127.0.0.1"));
    first.writeCert(certFile);
    first.writeKey(keyFile);
    ServerTls tls = ServerTls.fromFiles(certFile, keyFile);
    GuardedBinding binding = bindOk(tls);
    String url = "https://127.0.0.1:" + binding.localAddress().getPort() + "/";
    try {
      assertEquals(first.cert(), peer(url));

      // Half a rotation: the new certificate is written, its key not yet. Still the first.
      TestPki.Issued second = pki.issue("second-certificate", List.of("127.0.0.1"));
      second.writeCert(certFile);
      touch(certFile, 2);
      assertEquals(first.cert(), peer(url));

      // The key follows: the next handshake serves the new pair, with no restart.
      second.writeKey(keyFile);
      touch(keyFile, 4);
      assertEquals(second.cert(), peer(url));
      assertEquals(second.cert(), tls.certificate());
    } finally {
      binding.terminate().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** Moves a file's mtime ahead, so a rewrite within the clock's resolution still shows. */
  private static void touch(Path file, int seconds) throws IOException {
    Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(seconds)));
  }

  private GuardedBinding bindOk(ServerTls tls) throws Exception {
    return GuardedBinding.bind(
            kit.system(),
            "127.0.0.1",
            0,
            org.apache.pekko.http.javadsl.server.Directives.complete("ok"),
            GuardedBinding.Limits.fromConfig(kit.system().settings().config()),
            Optional.of(tls))
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  private RunnerClient dial(String url, ClientTls tls) {
    String token = TOKENS.issue("p-tls", Optional.of("r1"), Duration.ofMinutes(5));
    return RunnerClient.start(
        kit.system(),
        RunnerClient.Settings.of(
                url, "p-tls", "test", TokenSource.fixed(token), ProtocolConfig.builder().build())
            .withTls(tls));
  }

  private HttpClient client() {
    return HttpClient.newBuilder().sslContext(trust.sslContext()).connectTimeout(WAIT).build();
  }

  private HttpResponse<String> get(String url) throws Exception {
    return client()
        .send(
            HttpRequest.newBuilder(URI.create(url)).timeout(WAIT).build(),
            HttpResponse.BodyHandlers.ofString());
  }

  /** The certificate a fresh connection is served (a new client: no pooled connection). */
  private X509Certificate peer(String url) throws Exception {
    return (X509Certificate) get(url).sslSession().orElseThrow().getPeerCertificates()[0];
  }
}
