package io.capsule.runtime.harness.contain;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One request head read by the egress proxy, parsed (pure): a {@code CONNECT host:port} tunnel, a
 * plain-HTTP request in absolute form ({@code GET http://host:port/path}) rewritten to origin form
 * for the upstream, or a refusal with the reason for a 400.
 */
public sealed interface ProxyRequest {

  /** {@code CONNECT host:port}: answer 200 and tunnel bytes both ways. */
  record Connect(String host, int port) implements ProxyRequest {}

  /**
   * A plain-HTTP request to {@code host:port}; {@code head} is what goes upstream (origin-form
   * request line, the proxy's own headers dropped), ending with the blank line.
   */
  record Forward(String host, int port, byte[] head) implements ProxyRequest {}

  /** Not a request this proxy serves; {@code reason} goes into the 400. */
  record Bad(String reason) implements ProxyRequest {}

  /** Parses a head (request line and headers, up to and including the blank line). */
  static ProxyRequest parse(byte[] head) {
    String text = new String(head, StandardCharsets.ISO_8859_1);
    int eol = text.indexOf('\n');
    if (eol < 0) {
      return new Bad("no request line");
    }
    String line = text.substring(0, eol).strip();
    String[] parts = line.split(" ", -1);
    if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
      return new Bad("the request line is not METHOD TARGET HTTP/1.x");
    }
    String method = parts[0];
    String target = parts[1];
    if (method.equals("CONNECT")) {
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
    StringBuilder out = new StringBuilder();
    out.append(method).append(' ').append(path).append(' ').append(parts[2]).append("\r\n");
    for (String header : text.substring(eol + 1).split("\r?\n", -1)) {
      if (header.isEmpty()) {
        continue;
      }
      String name = header.substring(0, Math.max(0, header.indexOf(':'))).strip();
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.equals("proxy-connection") || lower.equals("proxy-authorization")) {
        continue; // meant for this proxy, not for the host
      }
      out.append(header).append("\r\n");
    }
    out.append("\r\n");
    return new Forward(a.host(), a.port(), out.toString().getBytes(StandardCharsets.ISO_8859_1));
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
