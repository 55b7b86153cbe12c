package io.capsule.runtime.harness.contain;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/**
 * One response head the egress proxy read from a host, parsed and rewritten for the client (pure):
 * an interim 1xx to relay before the final response, the final response, or a refusal with the
 * reason for a 502.
 *
 * <p>The rewrite (RFC 9110 §7.6.1): the status line as received, the hop-by-hop fields and every
 * field the host's {@code Connection} names dropped ({@link ProxyRequest#HOP_BY_HOP}), a {@code
 * Content-Length} beside a {@code Transfer-Encoding} dropped (RFC 9112 §6.3), and {@code
 * Connection: close} added when the client's connection ends after this response.
 */
sealed interface ProxyResponse {

  /** A 1xx other than 101 (e.g. {@code 100 Continue}): relay, then read the next head. */
  record Interim(int status, byte[] head) implements ProxyResponse {}

  /**
   * The final response: {@code head} for the client, {@code body} where it ends, {@code
   * closeClient} whether the client's connection ends after it, {@code upstreamReusable} whether
   * the host's connection may carry the next request.
   */
  record Final(
      int status, byte[] head, BodyFraming body, boolean closeClient, boolean upstreamReusable)
      implements ProxyResponse {}

  /** Not a response the proxy can pass on; {@code reason} goes into the 502. */
  record Bad(String reason) implements ProxyResponse {}

  /**
   * Parses the head of the response to a {@code method} request whose client connection stays open
   * when {@code clientKeepAlive}.
   */
  static ProxyResponse parse(byte[] bytes, String method, boolean clientKeepAlive) {
    try {
      HttpHead head = HttpHead.parse(bytes);
      HttpHead.StatusLine line = head.statusLine();
      if (line.status() == 101) {
        return new Bad("the host switched protocols, which this proxy never asks for");
      }
      Set<String> options = head.connectionOptions();
      if (options.contains("content-length") || options.contains("transfer-encoding")) {
        return new Bad("the host's Connection field names a framing field");
      }
      if (line.status() < 200) {
        return new Interim(line.status(), rewrite(head, options, false, false));
      }
      BodyFraming body = BodyFraming.ofResponse(head, line.status(), method);
      boolean coded = !head.all("Transfer-Encoding").isEmpty();
      boolean closeClient = !clientKeepAlive || body instanceof BodyFraming.UntilClose;
      boolean reusable =
          line.minor() == 1
              && !options.contains("close")
              && !(body instanceof BodyFraming.UntilClose);
      return new Final(
          line.status(), rewrite(head, options, coded, closeClient), body, closeClient, reusable);
    } catch (MalformedHttp e) {
      return new Bad("the host's response is malformed: " + e.getMessage());
    }
  }

  private static byte[] rewrite(
      HttpHead head, Set<String> options, boolean dropLength, boolean close) {
    StringBuilder out = new StringBuilder(head.startLine()).append("\r\n");
    for (HttpHead.Field f : head.fields()) {
      String name = f.name().toLowerCase(Locale.ROOT);
      if (ProxyRequest.HOP_BY_HOP.contains(name)
          || options.contains(name)
          || (dropLength && name.equals("content-length"))) {
        continue;
      }
      out.append(f.name()).append(": ").append(f.value()).append("\r\n");
    }
    if (close) {
      out.append("Connection: close\r\n");
    }
    return out.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }
}
