package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.NetworkEntry;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Plain HTTP/1.1 through the egress proxy, over its real Unix socket, to real hosts on loopback
 * ({@link RecordingHost}): every request of a persistent connection is checked and forwarded on its
 * own, in origin form, and both directions are framed (docs/architecture.md, "Containment of the
 * harness").
 */
@Timeout(30)
class EgressProxyHttpTest {

  private RecordingHost a;
  private RecordingHost b;
  private EgressProxy proxy;
  private final List<String> refusals = new CopyOnWriteArrayList<>();

  @BeforeEach
  void hostsAndProxy() throws IOException {
    a = new RecordingHost();
    b = new RecordingHost();
    proxy =
        EgressProxy.start(
            new EgressPolicy(
                List.of(
                    NetworkEntry.parse("127.0.0.1:" + a.port()),
                    NetworkEntry.parse("localhost:" + b.port()))),
            ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED),
            (host, port, reason, count) -> refusals.add(host + ":" + port + " #" + count));
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    a.close();
    b.close();
  }

  private SocketChannel client() throws IOException {
    return SocketChannel.open(UnixDomainSocketAddress.of(proxy.socket()));
  }

  private static void send(SocketChannel c, String text) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1));
    while (buf.hasRemaining()) {
      c.write(buf);
    }
  }

  /** Reads until {@code wanted} has arrived or the proxy closed. */
  private static String readUntil(SocketChannel c, String wanted) throws IOException {
    StringBuilder got = new StringBuilder();
    ByteBuffer buf = ByteBuffer.allocate(4096);
    while (!got.toString().contains(wanted)) {
      buf.clear();
      int n = c.read(buf);
      if (n < 0) {
        break;
      }
      got.append(new String(buf.array(), 0, n, StandardCharsets.ISO_8859_1));
    }
    return got.toString();
  }

  private String get(RecordingHost host, String path) {
    return "GET http://127.0.0.1:"
        + host.port()
        + path
        + " HTTP/1.1\r\n"
        + "Host: 127.0.0.1:"
        + host.port()
        + "\r\n"
        + "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
        + "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\n"
        + "TE: trailers\r\nUpgrade: h2c\r\nAccept: */*\r\n\r\n";
  }

  /** What the host must see for {@link #get}: origin form, Host first, only end-to-end fields. */
  private static String originForm(RecordingHost host, String path) {
    return "GET "
        + path
        + " HTTP/1.1\r\nHost: 127.0.0.1:"
        + host.port()
        + "\r\nAccept: */*\r\n\r\n";
  }

  @Test
  void threeRequestsOnOneConnectionEachReachTheHostInOriginFormOverOneHostConnection()
      throws IOException {
    a.then(RecordingHost.Reply.ok("one"))
        .then(RecordingHost.Reply.ok("two"))
        .then(RecordingHost.Reply.ok("three"));
    try (SocketChannel c = client()) {
      for (String body : List.of("one", "two", "three")) {
        send(c, get(a, "/" + body + "?q=1"));
        String answer = readUntil(c, body);
        assertTrue(answer.startsWith("HTTP/1.1 200 OK\r\nContent-Length: "), answer);
        assertFalse(answer.contains("Connection: close"), answer);
      }
    }
    assertEquals(
        List.of(
            new RecordingHost.Received(1, originForm(a, "/one?q=1"), ""),
            new RecordingHost.Received(1, originForm(a, "/two?q=1"), ""),
            new RecordingHost.Received(1, originForm(a, "/three?q=1"), "")),
        a.received());
    assertEquals(List.of(), refusals);
  }

  @Test
  void aSecondRequestForAnotherGrantedHostGoesToThatHost() throws Exception {
    a.then(RecordingHost.Reply.ok("from-a"));
    b.then(RecordingHost.Reply.ok("from-b"));
    try (SocketChannel c = client()) {
      send(c, get(a, "/first"));
      assertTrue(readUntil(c, "from-a").contains("200 OK"));
      send(c, "GET http://localhost:" + b.port() + "/second HTTP/1.1\r\nHost: elsewhere\r\n\r\n");
      assertTrue(readUntil(c, "from-b").contains("200 OK"));
      assertTrue(a.awaitEndedByProxy(Duration.ofSeconds(10)), "the first host's connection closed");
    }
    assertEquals(List.of(new RecordingHost.Received(1, originForm(a, "/first"), "")), a.received());
    assertEquals(
        List.of(
            new RecordingHost.Received(
                1, "GET /second HTTP/1.1\r\nHost: localhost:" + b.port() + "\r\n\r\n", "")),
        b.received());
  }

  @Test
  void aSecondRequestForARefusedHostGets403AndIsCountedAndNeverRidesTheFirstHostsConnection()
      throws IOException {
    a.then(RecordingHost.Reply.ok("granted"));
    int refused = a.port() ^ 1;
    try (SocketChannel c = client()) {
      send(c, get(a, "/granted"));
      assertTrue(readUntil(c, "granted").contains("200 OK"));
      send(c, "GET http://127.0.0.1:" + refused + "/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      String answer = readUntil(c, "-never-");
      assertTrue(answer.startsWith("HTTP/1.1 403 Forbidden"), answer);
      assertTrue(answer.contains("is not in capabilities.network.allow"), answer);
    }
    assertEquals(1, a.received().size(), a.received()::toString);
    assertEquals(List.of("127.0.0.1:" + refused + " #1"), refusals);
    assertEquals(1, proxy.refusedCount());
  }

  @Test
  void chunkedBodiesPassBothWaysAsSentAndTheConnectionGoesOn() throws IOException {
    String chunkedBody = "4\r\nWiki\r\n6;ext=1\r\npedia \r\n0\r\nX-Checksum: 7\r\n\r\n";
    a.then(
            RecordingHost.Reply.of(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n"))
        .then(RecordingHost.Reply.ok("next"));
    try (SocketChannel c = client()) {
      send(
          c,
          "POST http://127.0.0.1:"
              + a.port()
              + "/upload HTTP/1.1\r\n"
              + "Transfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n"
              + chunkedBody);
      String answer = readUntil(c, "0\r\n\r\n");
      assertTrue(
          answer.endsWith("Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n"),
          answer);
      send(c, get(a, "/next"));
      assertTrue(readUntil(c, "next").contains("200 OK"));
    }
    RecordingHost.Received upload = a.received().get(0);
    assertEquals(chunkedBody, upload.body());
    assertTrue(upload.head().contains("Transfer-Encoding: chunked\r\n"), upload::toString);
    assertFalse(upload.head().contains("Trailer:"), upload::toString);
    assertEquals(1, a.received().get(1).connection(), "the same host connection");
  }

  @Test
  void expect100ContinueRelaysTheInterimResponseBeforeTheBodyIsSent() throws IOException {
    a.then(
        new RecordingHost.Reply(
            "HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone", true, false));
    try (SocketChannel c = client()) {
      send(
          c,
          "PUT http://127.0.0.1:"
              + a.port()
              + "/file HTTP/1.1\r\nContent-Length: 5\r\n"
              + "Expect: 100-continue\r\n\r\n");
      // The body is sent only once the host said to go on, as a client that waits does.
      String interim = readUntil(c, "\r\n\r\n");
      assertEquals("HTTP/1.1 100 Continue\r\n\r\n", interim);
      send(c, "hello");
      assertTrue(readUntil(c, "done").startsWith("HTTP/1.1 201 Created\r\n"));
    }
    RecordingHost.Received put = a.received().get(0);
    assertTrue(put.head().contains("\r\nExpect: 100-continue\r\n"), put::toString);
    assertEquals("hello", put.body());
  }

  /** What the real Claude Code does on a 429: the retry comes on the same connection. */
  @Test
  void a429ThenA200OnTheSameConnection() throws IOException {
    String limited = "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}";
    a.then(
            RecordingHost.Reply.of(
                "HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\nContent-Type: application/json"
                    + "\r\nContent-Length: "
                    + limited.length()
                    + "\r\n\r\n"
                    + limited))
        .then(RecordingHost.Reply.ok("Made it."));
    String post =
        "POST http://127.0.0.1:"
            + a.port()
            + "/v1/messages?beta=true HTTP/1.1\r\n"
            + "Host: 127.0.0.1:"
            + a.port()
            + "\r\nConnection: keep-alive\r\n"
            + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    try (SocketChannel c = client()) {
      send(c, post);
      assertTrue(readUntil(c, "rate_limit_error").startsWith("HTTP/1.1 429 "));
      send(c, post);
      assertTrue(readUntil(c, "Made it.").startsWith("HTTP/1.1 200 OK"));
    }
    String origin =
        "POST /v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:"
            + a.port()
            + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n";
    assertEquals(
        List.of(
            new RecordingHost.Received(1, origin, "{}"),
            new RecordingHost.Received(1, origin, "{}")),
        a.received());
  }

  @Test
  void headAnd204AnswersHaveNoBodyWhateverTheirFieldsSay() throws IOException {
    a.then(RecordingHost.Reply.of("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"))
        .then(RecordingHost.Reply.of("HTTP/1.1 204 No Content\r\n\r\n"))
        .then(RecordingHost.Reply.ok("after"));
    try (SocketChannel c = client()) {
      send(c, "HEAD http://127.0.0.1:" + a.port() + "/h HTTP/1.1\r\n\r\n");
      assertEquals("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", readUntil(c, "\r\n\r\n"));
      send(c, get(a, "/empty"));
      assertEquals("HTTP/1.1 204 No Content\r\n\r\n", readUntil(c, "\r\n\r\n"));
      send(c, get(a, "/after"));
      assertTrue(readUntil(c, "after").startsWith("HTTP/1.1 200 OK"));
    }
    assertEquals(3, a.received().size());
    assertEquals(1, a.connections(), "one host connection for all three");
  }

  @Test
  void aCloseDelimitedResponseIsRelayedToItsEndAndThenClosesTheClient() throws IOException {
    a.then(new RecordingHost.Reply("HTTP/1.1 200 OK\r\n\r\nuntil the host closes", false, true));
    try (SocketChannel c = client()) {
      send(c, get(a, "/stream"));
      String answer = readUntil(c, "-never-"); // up to EOF
      assertEquals("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the host closes", answer);
    }
  }

  @Test
  void aPipelinedPairIsAnsweredInOrder() throws IOException {
    a.then(RecordingHost.Reply.ok("first")).then(RecordingHost.Reply.ok("second"));
    try (SocketChannel c = client()) {
      send(c, get(a, "/1") + get(a, "/2"));
      String answers = readUntil(c, "second");
      assertTrue(answers.indexOf("first") < answers.indexOf("second"), answers);
    }
    assertEquals(
        List.of(
            new RecordingHost.Received(1, originForm(a, "/1"), ""),
            new RecordingHost.Received(1, originForm(a, "/2"), "")),
        a.received());
  }

  @Test
  void anOversizedSecondHeadGets431() throws IOException {
    a.then(RecordingHost.Reply.ok("fine"));
    try (SocketChannel c = client()) {
      send(c, get(a, "/fine"));
      assertTrue(readUntil(c, "fine").contains("200 OK"));
      send(c, "GET http://127.0.0.1:" + a.port() + "/ HTTP/1.1\r\nX: " + "a".repeat(20_000));
      assertTrue(readUntil(c, "-never-").startsWith("HTTP/1.1 431 "));
    }
  }

  @Test
  void aRequestWithBothContentLengthAndTransferEncodingGets400AndReachesNoHost()
      throws IOException {
    try (SocketChannel c = client()) {
      send(
          c,
          "POST http://127.0.0.1:"
              + a.port()
              + "/ HTTP/1.1\r\nContent-Length: 3\r\n"
              + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
      String answer = readUntil(c, "-never-");
      assertTrue(answer.startsWith("HTTP/1.1 400 Bad Request"), answer);
      assertTrue(answer.contains("both Content-Length and Transfer-Encoding"), answer);
    }
    assertEquals(0, a.connections());
  }

  @Test
  void aBadChunkSizeGets400AndTheConnectionCloses() throws IOException {
    try (SocketChannel c = client()) {
      send(
          c,
          "POST http://127.0.0.1:"
              + a.port()
              + "/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
              + "zz\r\nnope\r\n0\r\n\r\n");
      String answer = readUntil(c, "-never-");
      assertTrue(answer.startsWith("HTTP/1.1 400 Bad Request"), answer);
      assertTrue(answer.contains("chunk"), answer);
    }
    assertEquals(List.of(), a.received(), "the host never got a whole request");
  }

  @Test
  void aHostThatClosesWithoutAnsweringGives502() throws IOException {
    a.then(new RecordingHost.Reply("", false, true));
    try (SocketChannel c = client()) {
      send(c, get(a, "/silent"));
      String answer = readUntil(c, "-never-");
      assertTrue(answer.startsWith("HTTP/1.1 502 Bad Gateway"), answer);
    }
  }
}
