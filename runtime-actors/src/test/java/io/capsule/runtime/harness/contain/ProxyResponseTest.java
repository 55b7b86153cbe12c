package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A host's response head as the proxy reads it: interim or final, its framing, what goes on. */
class ProxyResponseTest {

  private static ProxyResponse parse(String head, String method, boolean clientKeepAlive) {
    return ProxyResponse.parse(
        (head.replace("|", "\r\n") + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1),
        method,
        clientKeepAlive);
  }

  /** Fields separated by '|'; the head the client gets likewise, then its framing and flags. */
  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      textBlock =
          """
          HTTP/1.1 200 OK|Content-Length: 5 ; GET ; true ; HTTP/1.1 200 OK|Content-Length: 5 ; Length[bytes=5] ; false ; true
          HTTP/1.1 200 OK|Content-Length: 5 ; HEAD ; true ; HTTP/1.1 200 OK|Content-Length: 5 ; None[] ; false ; true
          HTTP/1.1 204 No Content|Content-Length: 5 ; GET ; true ; HTTP/1.1 204 No Content|Content-Length: 5 ; None[] ; false ; true
          HTTP/1.1 304 Not Modified|Content-Length: 9 ; GET ; true ; HTTP/1.1 304 Not Modified|Content-Length: 9 ; None[] ; false ; true
          HTTP/1.1 200 OK|Transfer-Encoding: chunked ; POST ; true ; HTTP/1.1 200 OK|Transfer-Encoding: chunked ; Chunked[] ; false ; true
          HTTP/1.1 200 OK|Content-Length: 5|Transfer-Encoding: chunked ; GET ; true ; HTTP/1.1 200 OK|Transfer-Encoding: chunked ; Chunked[] ; false ; true
          HTTP/1.1 200 OK|Transfer-Encoding: gzip ; GET ; true ; HTTP/1.1 200 OK|Transfer-Encoding: gzip|Connection: close ; UntilClose[] ; true ; false
          HTTP/1.1 200 OK|X-A: 1 ; GET ; true ; HTTP/1.1 200 OK|X-A: 1|Connection: close ; UntilClose[] ; true ; false
          HTTP/1.1 200 OK|Connection: close, X-Secret|X-Secret: 1|Content-Length: 0 ; GET ; true ; HTTP/1.1 200 OK|Content-Length: 0 ; None[] ; false ; false
          HTTP/1.1 429 Too Many Requests|Keep-Alive: timeout=5|retry-after: 1|Content-Length: 2 ; POST ; true ; HTTP/1.1 429 Too Many Requests|retry-after: 1|Content-Length: 2 ; Length[bytes=2] ; false ; true
          HTTP/1.0 200 OK|Content-Length: 3 ; GET ; true ; HTTP/1.0 200 OK|Content-Length: 3 ; Length[bytes=3] ; false ; false
          HTTP/1.1 200 OK|Content-Length: 3 ; GET ; false ; HTTP/1.1 200 OK|Content-Length: 3|Connection: close ; Length[bytes=3] ; true ; true
          """)
  void aFinalResponseIsRewrittenAndFramed(
      String head,
      String method,
      boolean clientKeepAlive,
      String forClient,
      String body,
      boolean closeClient,
      boolean reusable) {
    ProxyResponse.Final f =
        assertInstanceOf(ProxyResponse.Final.class, parse(head, method, clientKeepAlive));
    assertEquals(
        forClient.replace("|", "\r\n") + "\r\n\r\n",
        new String(f.head(), StandardCharsets.ISO_8859_1));
    assertEquals(body, f.body().toString());
    assertEquals(closeClient, f.closeClient(), "closeClient");
    assertEquals(reusable, f.upstreamReusable(), "upstreamReusable");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      textBlock =
          """
          HTTP/1.1 100 Continue ; HTTP/1.1 100 Continue
          HTTP/1.1 103 Early Hints|Link: </s.css>|Connection: keep-alive ; HTTP/1.1 103 Early Hints|Link: </s.css>
          """)
  void aInterimResponseIsRelayedBeforeTheFinalOne(String head, String forClient) {
    ProxyResponse.Interim i =
        assertInstanceOf(ProxyResponse.Interim.class, parse(head, "GET", true));
    assertEquals(
        forClient.replace("|", "\r\n") + "\r\n\r\n",
        new String(i.head(), StandardCharsets.ISO_8859_1));
  }

  /** What a proxy must not pass on: the client gets a 502 instead. */
  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      textBlock =
          """
          HTTP/1.1 101 Switching Protocols|Upgrade: websocket ; switched protocols
          HTTP/1.1 200 OK|Content-Length: abc ; is not a length
          HTTP/1.1 200 OK|Content-Length: 3|Content-Length: 4 ; differ
          HTTP/1.1 200 OK|Connection: Transfer-Encoding|Transfer-Encoding: chunked ; names a framing field
          HTTP/2 200 OK ; is not HTTP/1.0 or HTTP/1.1
          HTTP/1.1 20 OK ; not HTTP/1.x NNN
          HTTP/1.1 200 OK| folded: x ; obs-fold
          """)
  void aMalformedResponseIsRefused(String head, String reason) {
    ProxyResponse.Bad bad = assertInstanceOf(ProxyResponse.Bad.class, parse(head, "GET", true));
    assertTrue(bad.reason().contains(reason), bad::reason);
  }
}
