package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.hub.http.TestPki;
import io.capsule.protocol.token.ProjectTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code capsule hub --tls-cert --tls-key} and {@code capsule runner --ca-file} as real JVMs on
 * 127.0.0.1 with a CA this test makes: the hub says it serves HTTPS and whose certificate; a runner
 * without the CA refuses the hub with {@code E-TLS-002} and the host, and keeps refusing (no plain
 * fallback); a runner given the CA connects over {@code wss://}. Then the options' refusals and the
 * start-up warnings for plain wires off loopback.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class HubTlsCommandTest {
  private static final List<String> JVM = List.of("-Xmx192m", "-XX:TieredStopAtLevel=1");

  @TempDir Path work;

  private final List<AutoCloseable> processes = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable p : processes) {
      p.close();
    }
  }

  @Test
  void aRunnerConnectsOverWssWithTheCaFileAndRefusesTheHubWithoutIt() throws Exception {
    TestPki ca = TestPki.ca("capsule-test-ca", "EC");
    Path caFile = ca.writeCa(work.resolve("ca.pem"));
    TestPki.Issued server = ca.issue("capsule-hub", List.of("127.0.0.1"));
    Path secret =
        Files.writeString(work.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    HubProcess hub =
        HubProcess.start(
            "hub-tls",
            work,
            JVM,
            List.of(
                "--listen",
                "127.0.0.1:0",
                "--project",
                "demo",
                "--secret-file",
                secret.toString(),
                "--tls-cert",
                server.writeCert(work.resolve("hub.pem"), ca.cert()).toString(),
                "--tls-key",
                server.writeKey(work.resolve("hub.key")).toString()),
            Duration.ofSeconds(120));
    processes.add(hub);
    assertTrue(hub.apiUrl().startsWith("https://"), hub.output().toString());
    HubClusterKillTest.awaitLine(
        hub::output,
        "TLS: CN=capsule-hub, valid until ",
        Duration.ofSeconds(30),
        hub.name,
        hub.log);
    assertTrue(
        hub.output().stream().noneMatch(l -> l.startsWith("W-TLS")), hub.output().toString());

    ProjectTokens tokens = new ProjectTokens(Files.readAllBytes(secret), Duration.ofSeconds(30));
    Path token =
        Files.writeString(
            work.resolve("r.token"),
            tokens.issue("demo", Optional.of("r1"), Duration.ofMinutes(5)));
    Path capsules = Files.createDirectories(work.resolve("capsules"));

    RunnerProcess untrusting =
        RunnerProcess.start("runner-no-ca", work, JVM, hub.runnerUrl(), token, capsules);
    processes.add(untrusting::close);
    HubClusterKillTest.awaitLine(
        untrusting::output,
        "runner: disconnected: E-TLS-002 the certificate of 127.0.0.1:" + hub.port(),
        Duration.ofSeconds(120),
        untrusting.name,
        untrusting.log);
    assertTrue(
        untrusting.output().stream().noneMatch(l -> l.startsWith("runner: connected")),
        untrusting.output().toString());

    RunnerProcess trusting =
        RunnerProcess.start(
            "runner-ca",
            work,
            JVM,
            hub.runnerUrl(),
            token,
            capsules,
            List.of("--ca-file", caFile.toString()));
    processes.add(trusting::close);
    HubClusterKillTest.awaitLine(
        trusting::output,
        "runner: connected to " + hub.runnerUrl(),
        Duration.ofSeconds(120),
        trusting.name,
        trusting.log);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          a certificate without its key | hub --project p --tls-cert c.pem                           | --tls-cert and --tls-key go together
          cluster TLS without --cluster | hub --project p --cluster-tls-cert c --cluster-tls-key k --cluster-tls-ca a | are for a cluster node: add --cluster
          part of the cluster's files   | hub --project p --cluster --cluster-tls-cert c            | go together
          """)
  void incompleteTlsOptionsAreUsageErrors(String row, String args, String says) throws Exception {
    Path secret =
        Files.writeString(work.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    List<String> argv = new ArrayList<>(List.of(args.trim().split("\\s+")));
    argv.addAll(List.of("--secret-file", secret.toString()));
    Cli.Result r = Cli.run(argv.toArray(String[]::new));
    assertEquals(ExitCodes.USAGE, r.exit(), row + ": " + r.err());
    assertTrue(r.err().contains(says), row + ": " + r.err());
  }

  @Test
  void aCaFileThatCannotBeReadRefusesTheRunnersStart() throws Exception {
    Path capsules = Files.createDirectories(work.resolve("capsules"));
    Path token = Files.writeString(work.resolve("t"), "a.e30.b");
    Cli.Result r =
        Cli.run(
            "runner",
            "--hub",
            "wss://127.0.0.1:1/v1/runner",
            "--token-file",
            token.toString(),
            "--capsules",
            capsules.toString(),
            "--project",
            "p",
            "--ca-file",
            work.resolve("missing.pem").toString());
    assertTrue(r.err().contains("E-TLS-001"), r.err());
  }

  @Test
  void aStoreUrlHoldingAPasswordIsRefusedWithoutPrintingIt() {
    Cli.Result r =
        Cli.run(
            "hub",
            "migrate",
            "--store",
            "jdbc:postgresql://127.0.0.1:1/capsule?sslmode=verify-full&password=hunter2secret");
    assertTrue(r.err().contains("E-CFG-001"), r.err());
    assertFalse((r.out() + r.err()).contains("hunter2secret"), r.err());
  }

  /** The start-up warnings: a plain wire that leaves the machine says so, TLS or loopback not. */
  @ParameterizedTest(name = "listen {0}, edge TLS {1}, canonical {2}, cluster TLS {3}")
  @CsvSource(
      textBlock =
          """
          127.0.0.1, false, ,          false, ''
          localhost, false, ,          false, ''
          ::1,       false, ,          false, ''
          0.0.0.0,   false, ,          false, W-TLS-001
          0.0.0.0,   true,  ,          false, ''
          127.0.0.1, false, 127.0.0.1, false, ''
          127.0.0.1, false, 10.1.2.3,  false, W-TLS-002
          127.0.0.1, false, 10.1.2.3,  true,  ''
          10.1.2.3,  false, 10.1.2.3,  false, W-TLS-001 W-TLS-002
          """)
  void aPlainWireOffLoopbackWarnsAtStart(
      String listen, boolean edgeTls, String canonical, boolean clusterTls, String codes) {
    List<String> said =
        HubTlsOptions.warnings(listen, edgeTls, Optional.ofNullable(canonical), clusterTls).stream()
            .map(l -> l.substring(0, l.indexOf(' ')))
            .toList();
    assertEquals(codes.isEmpty() ? List.of() : List.of(codes.split(" ")), said);
  }
}
