package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ProxyRequestTest {

  private static ProxyRequest parse(String head) {
    return ProxyRequest.parse(head.getBytes(StandardCharsets.ISO_8859_1));
  }

  static Stream<Arguments> targets() {
    return Stream.of(
        Arguments.of("CONNECT api.example.com:443 HTTP/1.1", "api.example.com", 443),
        Arguments.of("CONNECT 127.0.0.1:8080 HTTP/1.0", "127.0.0.1", 8080),
        Arguments.of("GET http://example.com/x?y=1 HTTP/1.1", "example.com", 80),
        Arguments.of("POST HTTP://example.com:8080 HTTP/1.1", "example.com", 8080),
        Arguments.of("GET http://example.com?q HTTP/1.1", "example.com", 80));
  }

  @ParameterizedTest
  @MethodSource("targets")
  void findsHostAndPort(String requestLine, String host, int port) {
    ProxyRequest r = parse(requestLine + "\r\nHost: x\r\n\r\n");
    if (r instanceof ProxyRequest.Connect c) {
      assertEquals(host, c.host());
      assertEquals(port, c.port());
    } else {
      ProxyRequest.Forward f = assertInstanceOf(ProxyRequest.Forward.class, r);
      assertEquals(host, f.host());
      assertEquals(port, f.port());
    }
  }

  static Stream<String> bad() {
    return Stream.of(
        "CONNECT api.example.com HTTP/1.1",
        "CONNECT [::1]:443 HTTP/1.1",
        "CONNECT user@host:443 HTTP/1.1",
        "CONNECT host:99999 HTTP/1.1",
        "GET / HTTP/1.1",
        "GET https://example.com/ HTTP/1.1",
        "GET http://user:pw@example.com/ HTTP/1.1",
        "GET http:///x HTTP/1.1",
        "GET http://example.com/ HTTP/2",
        "nonsense");
  }

  @ParameterizedTest
  @MethodSource("bad")
  void refusesWhatItDoesNotServe(String requestLine) {
    assertInstanceOf(ProxyRequest.Bad.class, parse(requestLine + "\r\n\r\n"));
  }

  @Test
  void aForwardedHeadIsOriginFormWithoutTheProxysHeaders() {
    ProxyRequest.Forward f =
        assertInstanceOf(
            ProxyRequest.Forward.class,
            parse(
                "GET http://example.com:81/a/b?c HTTP/1.1\r\nHost: example.com:81\r\n"
                    + "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
                    + "Accept: */*\r\n\r\n"));
    assertEquals(
        "GET /a/b?c HTTP/1.1\r\nHost: example.com:81\r\nAccept: */*\r\n\r\n",
        new String(f.head(), StandardCharsets.ISO_8859_1));
  }

  /** Heads RFC 9112 says to refuse, with what the 400 must say. */
  static Stream<Arguments> refusedHeads() {
    String get = "GET http://h/ HTTP/1.1\r\n";
    String post = "POST http://h/ HTTP/1.1\r\n";
    return Stream.of(
        Arguments.of("GET  http://h/ HTTP/1.1\r\n\r\n", "METHOD TARGET HTTP/1.x"),
        Arguments.of("GET http://h/\u00e9 HTTP/1.1\r\n\r\n", "outside visible ASCII"),
        Arguments.of(get + "X: a\r\n  folded\r\n\r\n", "obs-fold"),
        Arguments.of(get + "X : a\r\n\r\n", "is not a token"),
        Arguments.of(get + "no colon\r\n\r\n", "without 'name:'"),
        Arguments.of(get + "X: a\rb\r\n\r\n", "a bare CR"),
        Arguments.of(get + "X: a\u0000b\r\n\r\n", "a control character"),
        Arguments.of(get + "Host: a\r\nHost: b\r\n\r\n", "more than one Host"),
        Arguments.of(get + "Connection: Content-Length\r\n\r\n", "Connection names"),
        Arguments.of(
            post + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "both Content-Length and Transfer-Encoding"),
        Arguments.of(post + "Transfer-Encoding: chunked, gzip\r\n\r\n", "a single chunked"),
        Arguments.of(
            post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            "a single chunked"),
        Arguments.of(
            "POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0 request"),
        Arguments.of(post + "Content-Length: 3\r\nContent-Length: 4\r\n\r\n", "differ"),
        Arguments.of(post + "Content-Length: 3, 4\r\n\r\n", "differ"),
        Arguments.of(post + "Content-Length: -1\r\n\r\n", "is not a length"),
        Arguments.of(post + "Content-Length: 1e3\r\n\r\n", "is not a length"));
  }

  @ParameterizedTest
  @MethodSource("refusedHeads")
  void refusesWhatRfc9112SaysToRefuse(String head, String reason) {
    ProxyRequest.Bad bad = assertInstanceOf(ProxyRequest.Bad.class, parse(head));
    assertTrue(bad.reason().contains(reason), bad::reason);
  }

  static Stream<Arguments> framings() {
    return Stream.of(
        Arguments.of("GET http://h/ HTTP/1.1\r\n\r\n", BodyFraming.NONE, true),
        Arguments.of(
            "POST http://h/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n", BodyFraming.NONE, true),
        Arguments.of(
            "POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
            new BodyFraming.Length(5),
            true),
        Arguments.of(
            "POST http://h/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
            new BodyFraming.Length(5),
            true),
        Arguments.of(
            "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n",
            BodyFraming.CHUNKED,
            true),
        Arguments.of(
            "POST http://h/ HTTP/1.1\r\nConnection: Close\r\nContent-Length: 1\r\n\r\n",
            new BodyFraming.Length(1),
            false),
        Arguments.of("GET http://h/ HTTP/1.0\r\n\r\n", BodyFraming.NONE, false),
        // A bare LF ends a line as CRLF does (RFC 9112 §2.2).
        Arguments.of("GET http://h/ HTTP/1.1\nAccept: */*\n\n", BodyFraming.NONE, true));
  }

  @ParameterizedTest
  @MethodSource("framings")
  void findsWhereTheBodyEndsAndWhetherTheConnectionStays(
      String head, BodyFraming body, boolean keepAlive) {
    ProxyRequest.Forward f = assertInstanceOf(ProxyRequest.Forward.class, parse(head));
    assertEquals(body, f.body());
    assertEquals(keepAlive, f.keepAlive());
  }

  @Test
  void theHostComesFromTheTargetAndConnectionNamedFieldsAndTheFragmentAreDropped() {
    ProxyRequest.Forward f =
        assertInstanceOf(
            ProxyRequest.Forward.class,
            parse(
                "POST http://Api.Example.com/v1?x#frag HTTP/1.1\r\nHost: other\r\n"
                    + "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\n"
                    + "TE: trailers\r\nTrailer: X-T\r\nUpgrade: h2c\r\n"
                    + "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"));
    assertEquals(
        "POST /v1?x HTTP/1.1\r\nHost: Api.Example.com\r\nTransfer-Encoding: chunked\r\n"
            + "Expect: 100-continue\r\n\r\n",
        new String(f.head(), StandardCharsets.ISO_8859_1));
    assertEquals("POST", f.method());
  }
}
