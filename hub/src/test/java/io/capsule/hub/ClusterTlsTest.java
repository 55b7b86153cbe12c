package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.http.TestPki;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The hub cluster's transport on mutual TLS ({@link ClusterTls}), with certificates this test
 * makes: three nodes (three actor systems with {@link HubCluster#member} settings on 127.0.0.1)
 * whose certificates the cluster's CA signed form a cluster; a fourth node whose certificate
 * another CA signed is refused at the handshake and never becomes a member (and the refusal is
 * logged); a TLS client that shows no certificate at all is refused by the handshake itself. The
 * kill test of a hub cluster over TLS, in separate JVMs, is {@code HubClusterKillTest} (cli).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ClusterTlsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String SYSTEM = "capsule-hub";

  @TempDir static Path dir;

  private final List<ActorSystem<Void>> nodes = new ArrayList<>();

  @AfterAll
  void stop() {
    nodes.forEach(ActorSystem::terminate);
    for (ActorSystem<Void> n : nodes) {
      n.getWhenTerminated().toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
    }
  }

  @Test
  void threeNodesOfTheCaFormTheClusterAndNoOtherIsAdmitted() throws Exception {
    TestPki ca = TestPki.ca("capsule-cluster-ca", "RSA");
    Path caFile = ca.writeCa(dir.resolve("ca.pem"));
    List<Integer> ports = freePorts(3);
    List<HubCluster.Endpoint> seeds = List.of(new HubCluster.Endpoint("127.0.0.1", ports.get(0)));
    Logged logged = new Logged();
    logged.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(logged);
    try {
      for (int i = 0; i < 3; i++) {
        nodes.add(node(ca, "node-" + i, caFile, ports.get(i), seeds));
      }
      for (ActorSystem<Void> n : nodes) {
        Await.until(
            () -> upMembers(n),
            up -> up == 3,
            WAIT,
            n.address() + " sees three nodes up over mutual TLS");
      }

      // A fourth node, its certificate from another CA (it trusts the cluster's CA itself).
      logged.events.clear();
      TestPki stranger = TestPki.ca("capsule-cluster-ca", "RSA");
      int strangerPort = freePorts(1).get(0);
      ActorSystem<Void> fourth = node(stranger, "node-x", caFile, strangerPort, seeds);
      nodes.add(fourth);
      Await.until(
          () -> logged.events.stream().filter(ClusterTlsTest::handshakeFailure).count(),
          n -> n > 0,
          WAIT,
          "a logged handshake refusal of the fourth node");
      for (ActorSystem<Void> n : nodes.subList(0, 3)) {
        assertEquals(3, upMembers(n), n.address() + ": still three members");
        assertTrue(
            java.util.stream.StreamSupport.stream(
                    Cluster.get(n).state().getMembers().spliterator(), false)
                .noneMatch(m -> m.address().port().contains(strangerPort)),
            "the fourth node is no member");
      }
      assertTrue(
          Cluster.get(fourth).selfMember().status() != MemberStatus.up(),
          "the fourth node is not up");

      // A TLS client with no certificate at all: the node's handshake asks for one and refuses.
      assertThrows(IOException.class, () -> handshakeWithoutCertificate(caFile, ports.get(1)));
    } finally {
      root.detachAppender(logged);
    }
  }

  /** The fourth node's side of the refusal: the node it dialled answered with a TLS alert. */
  private static boolean handshakeFailure(ILoggingEvent e) {
    String text = e.getFormattedMessage();
    return text.contains("SSLHandshakeException") && text.contains("certificate_unknown");
  }

  /** Log events from every thread, readable while they arrive. */
  private static final class Logged extends AppenderBase<ILoggingEvent> {
    final Queue<ILoggingEvent> events = new ConcurrentLinkedQueue<>();

    @Override
    protected void append(ILoggingEvent e) {
      events.add(e);
    }
  }

  private static long upMembers(ActorSystem<?> n) {
    return java.util.stream.StreamSupport.stream(
            Cluster.get(n).state().getMembers().spliterator(), false)
        .filter(m -> m.status() == MemberStatus.up())
        .count();
  }

  private static ActorSystem<Void> node(
      TestPki issuer, String name, Path caFile, int port, List<HubCluster.Endpoint> seeds)
      throws Exception {
    TestPki.Issued cert =
        issuer.issue("capsule-hub-cluster", List.of("capsule-hub-cluster", "127.0.0.1"));
    ClusterTls tls =
        ClusterTls.checked(
            cert.writeCert(dir.resolve(name + ".pem")),
            cert.writeKey(dir.resolve(name + ".key")),
            caFile);
    Config config =
        tls.config()
            .withFallback(
                HubCluster.member(
                    SYSTEM,
                    new HubCluster.Endpoint("127.0.0.1", port),
                    seeds,
                    HubCluster.Failover.fromConfig(ConfigFactory.load())))
            .withFallback(ConfigFactory.load());
    return ActorSystem.create(Behaviors.empty(), SYSTEM, config);
  }

  /** Connects to a node's cluster port with TLS, trusting its CA but holding no certificate. */
  private static void handshakeWithoutCertificate(Path caFile, int port) throws Exception {
    java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", io.capsule.protocol.tls.Pem.certificates(caFile).get(0));
    TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.startHandshake();
      // TLS 1.3: the server's verdict on the client's (empty) certificate comes after the
      // client's handshake ends; the first read sees the alert.
      s.getOutputStream().write(0);
      s.getOutputStream().flush();
      if (s.getInputStream().read() < 0) {
        throw new IOException("closed by the node");
      }
    }
  }

  private static List<Integer> freePorts(int n) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        held.add(new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()));
      }
      return held.stream().map(ServerSocket::getLocalPort).toList();
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
  }
}
