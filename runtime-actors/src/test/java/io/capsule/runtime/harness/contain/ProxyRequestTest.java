package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

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
}
