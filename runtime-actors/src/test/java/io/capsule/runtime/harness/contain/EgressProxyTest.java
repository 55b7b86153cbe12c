package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.NetworkEntry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The egress proxy over a real Unix socket and a real loopback echo server. */
@Timeout(30)
class EgressProxyTest {

  private ServerSocket echo;
  private Thread echoThread;
  private final List<String> refusals = new CopyOnWriteArrayList<>();

  @BeforeEach
  void echoServer() throws IOException {
    echo = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    echoThread =
        new Thread(
            () -> {
              while (!echo.isClosed()) {
                try {
                  Socket s = echo.accept();
                  Thread t =
                      new Thread(
                          () -> {
                            try (s) {
                              s.getInputStream().transferTo(s.getOutputStream());
                            } catch (IOException e) {
                              // The test closed it.
                            }
                          });
                  t.setDaemon(true);
                  t.start();
                } catch (IOException e) {
                  return;
                }
              }
            });
    echoThread.setDaemon(true);
    echoThread.start();
  }

  @AfterEach
  void stopEcho() throws IOException {
    echo.close();
  }

  private EgressProxy proxy(ContainmentConfig config) throws IOException {
    return EgressProxy.start(
        new EgressPolicy(List.of(NetworkEntry.parse("127.0.0.1:" + echo.getLocalPort()))),
        config,
        (host, port, reason, count) -> refusals.add(host + ":" + port + " #" + count));
  }

  private static SocketChannel connect(EgressProxy proxy) throws IOException {
    return SocketChannel.open(UnixDomainSocketAddress.of(proxy.socket()));
  }

  private static void send(SocketChannel c, String text) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1));
    while (b.hasRemaining()) {
      c.write(b);
    }
  }

  /** Reads until {@code wanted} has arrived or the peer closed. */
  private static String readUntil(SocketChannel c, String wanted) throws IOException {
    StringBuilder got = new StringBuilder();
    ByteBuffer b = ByteBuffer.allocate(4096);
    while (!got.toString().contains(wanted)) {
      b.clear();
      int n = c.read(b);
      if (n < 0) {
        break;
      }
      got.append(new String(b.array(), 0, n, StandardCharsets.ISO_8859_1));
    }
    return got.toString();
  }

  /** {@link #config()} with at most {@code connections} open and this idle timeout. */
  private static ContainmentConfig bounded(int connections, Duration idle) {
    return new ContainmentConfig(
        ContainmentConfig.Mode.REQUIRED,
        config().bwrap(),
        config().socat(),
        connections,
        16 * 1024,
        idle,
        Duration.ofSeconds(5));
  }

  private static ContainmentConfig config() {
    return ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED);
  }

  @Test
  void aGrantedConnectTunnelsBothWays() throws IOException {
    try (EgressProxy proxy = proxy(config());
        SocketChannel c = connect(proxy)) {
      send(c, "CONNECT 127.0.0.1:" + echo.getLocalPort() + " HTTP/1.1\r\n\r\nearly;");
      assertTrue(readUntil(c, "early;").startsWith("HTTP/1.1 200 "));
      send(c, "ping");
      assertEquals("ping", readUntil(c, "ping"));
      assertEquals(List.of(), refusals);
    }
  }

  /** The sandbox has no DNS: a granted name is resolved here, by the proxy. */
  @Test
  void aGrantedHostNameIsResolvedByTheProxy() throws IOException {
    try (EgressProxy proxy =
            EgressProxy.start(
                new EgressPolicy(List.of(NetworkEntry.parse("localhost:" + echo.getLocalPort()))),
                config(),
                (host, port, reason, count) -> refusals.add(host + ":" + port));
        SocketChannel c = connect(proxy)) {
      send(c, "CONNECT localhost:" + echo.getLocalPort() + " HTTP/1.1\r\n\r\n");
      assertTrue(readUntil(c, "\r\n\r\n").startsWith("HTTP/1.1 200 "));
      send(c, "by-name");
      assertEquals("by-name", readUntil(c, "by-name"));
      assertEquals(List.of(), refusals);
    }
  }

  @Test
  void aRefusedHostGets403WithTheReasonAndIsCountedAndNeverConnected() throws IOException {
    try (EgressProxy proxy = proxy(config())) {
      for (int i = 1; i <= 2; i++) {
        try (SocketChannel c = connect(proxy)) {
          send(c, "CONNECT 127.0.0.1:" + (echo.getLocalPort() ^ 1) + " HTTP/1.1\r\n\r\n");
          String answer = readUntil(c, "\n\n-never-");
          assertTrue(answer.startsWith("HTTP/1.1 403 Forbidden"), answer);
          assertTrue(answer.contains("is not in capabilities.network.allow"), answer);
        }
      }
      assertEquals(2, proxy.refusedCount());
      assertEquals(
          List.of(
              "127.0.0.1:" + (echo.getLocalPort() ^ 1) + " #1",
              "127.0.0.1:" + (echo.getLocalPort() ^ 1) + " #2"),
          refusals);
    }
  }

  @Test
  void anOversizedHeadGets431() throws IOException {
    try (EgressProxy proxy = proxy(config());
        SocketChannel c = connect(proxy)) {
      send(c, "GET http://127.0.0.1/ HTTP/1.1\r\nX: " + "a".repeat(20_000));
      assertTrue(readUntil(c, "-never-").startsWith("HTTP/1.1 431 "));
    }
  }

  @Test
  void connectionsOverTheBoundGet503() throws IOException {
    ContainmentConfig two = bounded(2, Duration.ofSeconds(30));
    try (EgressProxy proxy = proxy(two);
        SocketChannel a = connect(proxy);
        SocketChannel b = connect(proxy)) {
      send(a, "CONNECT 127.0.0.1:" + echo.getLocalPort() + " HTTP/1.1\r\n\r\n");
      send(b, "CONNECT 127.0.0.1:" + echo.getLocalPort() + " HTTP/1.1\r\n\r\n");
      // Both established (not refused or dropped), so the third is the one over the bound.
      assertTrue(readUntil(a, "\r\n\r\n").startsWith("HTTP/1.1 200 "), "the first tunnel");
      assertTrue(readUntil(b, "\r\n\r\n").startsWith("HTTP/1.1 200 "), "the second tunnel");
      assertEquals(2, proxy.openConnections(), "both counted before the third comes");
      try (SocketChannel third = connect(proxy)) {
        assertTrue(readUntil(third, "-never-").startsWith("HTTP/1.1 503 "));
      }
    }
  }

  /**
   * Tunnels opened and closed in quick succession, never more than the bound at once: every one is
   * established, and released once both ends closed. (A CI run once saw a connection within the
   * bound dropped in {@link #connectionsOverTheBoundGet503}: the proxy's one pool, sized to the
   * bound and refusing over it, counted threads that had just finished a task, so in a burst a
   * connection's second task could be refused and the connection closed. The pools now queue.)
   */
  @Test
  void tunnelsWithinTheBoundAreEstablishedHoweverFastTheyComeAndGo() throws IOException {
    ContainmentConfig two = bounded(2, Duration.ofSeconds(30));
    String connect = "CONNECT 127.0.0.1:" + echo.getLocalPort() + " HTTP/1.1\r\n\r\n";
    try (EgressProxy proxy = proxy(two)) {
      for (int round = 0; round < 300; round++) {
        try (SocketChannel a = connect(proxy);
            SocketChannel b = connect(proxy)) {
          send(a, connect);
          send(b, connect);
          String first = readUntil(a, "\r\n\r\n");
          String second = readUntil(b, "\r\n\r\n");
          assertTrue(first.startsWith("HTTP/1.1 200 "), "round " + round + ": " + first);
          assertTrue(second.startsWith("HTTP/1.1 200 "), "round " + round + ": " + second);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (proxy.openConnections() > 0 && System.nanoTime() < deadline) {
          Thread.onSpinWait(); // both closed: the proxy releases them as their pumps end
        }
        assertEquals(0, proxy.openConnections(), "round " + round + ": released");
      }
    }
  }

  @Test
  void anIdleConnectionIsClosed() throws IOException {
    ContainmentConfig quick = bounded(4, Duration.ofMillis(400));
    try (EgressProxy proxy = proxy(quick);
        SocketChannel c = connect(proxy)) {
      send(c, "CONNECT 127.0.0.1:" + echo.getLocalPort() + " HTTP/1.1\r\n\r\n");
      readUntil(c, "\r\n\r\n");
      // Nothing is sent: the watchdog closes the tunnel and the read sees EOF.
      assertEquals("", readUntil(c, "-never-"));
    }
  }

  @Test
  void closeRemovesTheSocketAndEndsTunnels() throws IOException {
    EgressProxy proxy = proxy(config());
    SocketChannel c = connect(proxy);
    send(c, "CONNECT 127.0.0.1:" + echo.getLocalPort() + " HTTP/1.1\r\n\r\n");
    readUntil(c, "\r\n\r\n");
    proxy.close();
    assertFalse(Files.exists(proxy.socket()));
    assertFalse(Files.exists(proxy.socket().getParent()));
    assertEquals("", readUntil(c, "-never-"));
    c.close();
  }
}
