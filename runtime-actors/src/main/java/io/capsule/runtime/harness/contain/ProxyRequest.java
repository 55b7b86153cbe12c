package io.capsule.runtime.harness.contain;

import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * One request head read by the egress proxy, parsed (pure): a {@code CONNECT host:port} tunnel, a
 * plain-HTTP request in absolute form ({@code GET http://host:port/path}) rewritten for the host,
 * or a refusal with the reason for a 400.
 *
 * <p>The rewrite (RFC 9112 §3.2.2, RFC 9110 §7.6.1): the request line in origin form ({@code GET
 * /path?query HTTP/1.1}); {@code Host} set from the target's authority, whatever the client sent;
 * the hop-by-hop and proxy fields dropped ({@link #HOP_BY_HOP}, and every field the {@code
 * Connection} field names). {@code Upgrade} is dropped, not supported: a plain-HTTP connection
 * through this proxy stays HTTP/1.1 (WebSockets to a granted host go through CONNECT).
 */
public sealed interface ProxyRequest {

  /**
   * Fields meant for one connection only, never forwarded (lower case). {@code Transfer-Encoding}
   * is not among them: a chunked body is forwarded as sent, so its framing field goes with it.
   */
  Set<String> HOP_BY_HOP =
      Set.of(
          "connection",
          "proxy-connection",
          "keep-alive",
          "proxy-authorization",
          "proxy-authenticate",
          "te",
          "trailer",
          "upgrade");

  /** {@code CONNECT host:port}: answer 200 and tunnel bytes both ways. */
  record Connect(String host, int port) implements ProxyRequest {}

  /**
   * A plain-HTTP request to {@code host:port}; {@code head} is what goes upstream (origin-form
   * request line, {@code Host} first, ending with the empty line), {@code body} where its body
   * ends, {@code keepAlive} whether the client's connection stays open after the response (HTTP/1.1
   * without {@code Connection: close}).
   */
  record Forward(
      String host, int port, String method, byte[] head, BodyFraming body, boolean keepAlive)
      implements ProxyRequest {}

  /** Not a request this proxy serves; {@code reason} goes into the 400. */
  record Bad(String reason) implements ProxyRequest {}

  /** Parses a head (request line and fields, up to and including the empty line). */
  static ProxyRequest parse(byte[] bytes) {
    try {
      return parse(HttpHead.parse(bytes));
    } catch (MalformedHttp e) {
      return new Bad(e.getMessage());
    }
  }

  private static ProxyRequest parse(HttpHead head) throws MalformedHttp {
    HttpHead.RequestLine line = head.requestLine();
    String target = line.target();
    if (line.method().equals("CONNECT")) {
      Authority a = authority(target, -1);
      return a != null
          ? new Connect(a.host(), a.port())
          : new Bad("CONNECT needs host:port, got '" + target + "'");
    }
    if (!target.regionMatches(true, 0, "http://", 0, 7)) {
      return new Bad(
          "a proxied request needs an absolute http:// target (https goes through CONNECT)");
    }
    String rest = target.substring(7);
    int hash = rest.indexOf('#');
    if (hash >= 0) {
      rest =
          rest.substring(0, hash); // a fragment is the client's own, never sent (RFC 9110 §4.2.5)
    }
    int slash = firstOf(rest, '/', '?');
    String auth = slash < 0 ? rest : rest.substring(0, slash);
    String path = slash < 0 ? "/" : rest.substring(slash);
    if (path.startsWith("?")) {
      path = "/" + path;
    }
    Authority a = authority(auth, 80);
    if (a == null) {
      return new Bad("'" + target + "' has no usable host[:port]");
    }
    if (head.all("Host").size() > 1) {
      throw new MalformedHttp("more than one Host field (RFC 9112 §3.2)");
    }
    Set<String> options = head.connectionOptions();
    for (String framing : Set.of("content-length", "transfer-encoding", "host")) {
      if (options.contains(framing)) {
        throw new MalformedHttp("Connection names " + framing + ", which must reach the host");
      }
    }
    BodyFraming body = BodyFraming.ofRequest(head, line.minor());
    boolean keepAlive = line.minor() == 1 && !options.contains("close");
    StringBuilder out = new StringBuilder();
    out.append(line.method()).append(' ').append(path).append(" HTTP/1.").append(line.minor());
    out.append("\r\nHost: ").append(auth).append("\r\n");
    for (HttpHead.Field f : head.fields()) {
      String name = f.name().toLowerCase(java.util.Locale.ROOT);
      if (name.equals("host") || HOP_BY_HOP.contains(name) || options.contains(name)) {
        continue;
      }
      out.append(f.name()).append(": ").append(f.value()).append("\r\n");
    }
    out.append("\r\n");
    byte[] bytes = out.toString().getBytes(StandardCharsets.ISO_8859_1);
    return new Forward(a.host(), a.port(), line.method(), bytes, body, keepAlive);
  }

  /** {@code host[:port]}, no user info and no IPv6 literal; the port defaults when {@code >0}. */
  private static Authority authority(String text, int defaultPort) {
    if (text.isEmpty() || text.indexOf('@') >= 0 || text.startsWith("[")) {
      return null;
    }
    int colon = text.lastIndexOf(':');
    String host = colon < 0 ? text : text.substring(0, colon);
    int port = defaultPort;
    if (colon >= 0) {
      String digits = text.substring(colon + 1);
      if (!digits.matches("\\d{1,5}")) {
        return null;
      }
      port = Integer.parseInt(digits);
    }
    if (host.isEmpty() || port < 1 || port > 65535) {
      return null;
    }
    return new Authority(host, port);
  }

  private static int firstOf(String s, char a, char b) {
    int i = s.indexOf(a);
    int j = s.indexOf(b);
    return i < 0 ? j : (j < 0 ? i : Math.min(i, j));
  }

  /** A parsed {@code host:port}. */
  record Authority(String host, int port) {}
}
