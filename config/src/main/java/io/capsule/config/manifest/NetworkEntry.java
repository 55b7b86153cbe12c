package io.capsule.config.manifest;

import java.util.Locale;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * One {@code capabilities.network.allow} entry, also the shape of a driver's host need: {@code
 * host[:port]} or {@code *.domain[:port]}, or an origin URL {@code https://host[:port]} (port 443
 * unless given) or {@code http://host[:port]} (port 80), the form vendors' docs write. A URL names
 * an origin only: a path, query, fragment or user-info is refused, since the egress proxy sees
 * hosts and ports, never paths (docs/manifest.md, "capabilities.network"). Host names compare
 * case-insensitively, so they are kept lowercase.
 *
 * @param host the host, or for a wildcard the domain after {@code *.}
 * @param wildcard whether this is {@code *.domain}: any subdomain of {@code host}, not {@code host}
 *     itself
 * @param port the port, or empty for any port
 */
public record NetworkEntry(String host, boolean wildcard, OptionalInt port) {

  // RFC 1123 labels: letters, digits, inner hyphens, 1-63 characters. An IPv4 literal fits too.
  private static final Pattern LABEL = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?");
  private static final int MAX_HOST = 253;

  public NetworkEntry {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(port, "port");
  }

  /**
   * Parses an entry.
   *
   * @throws IllegalArgumentException with one line saying what is wrong
   */
  public static NetworkEntry parse(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("a network entry must not be blank");
    }
    String rest = text.strip().toLowerCase(Locale.ROOT);
    OptionalInt schemePort = OptionalInt.empty();
    int scheme = rest.indexOf("://");
    if (scheme >= 0) {
      schemePort = OptionalInt.of(schemePort(rest.substring(0, scheme), text));
      rest = origin(rest.substring(scheme + 3), text, rest.substring(0, scheme + 3));
    }
    if (rest.startsWith("[")) {
      throw new IllegalArgumentException("IPv6 literals are not supported; use a host name");
    }
    OptionalInt port = OptionalInt.empty();
    int colon = rest.lastIndexOf(':');
    if (colon >= 0) {
      port = OptionalInt.of(port(rest.substring(colon + 1)));
      rest = rest.substring(0, colon);
    } else {
      port = schemePort;
    }
    boolean wildcard = rest.startsWith("*.");
    if (wildcard) {
      rest = rest.substring(2);
    }
    if (rest.isEmpty() || rest.length() > MAX_HOST) {
      throw new IllegalArgumentException("expected host[:port] or *.domain[:port]");
    }
    for (String label : rest.split("\\.", -1)) {
      if (!LABEL.matcher(label).matches()) {
        throw new IllegalArgumentException(
            "'" + label + "' is not a host name label; expected host[:port] or *.domain[:port]");
      }
    }
    return new NetworkEntry(rest, wildcard, port);
  }

  private static int schemePort(String scheme, String text) {
    return switch (scheme) {
      case "https" -> 443;
      case "http" -> 80;
      default ->
          throw new IllegalArgumentException(
              "'"
                  + text.strip()
                  + "': only https:// and http:// URLs are understood; or write host:port");
    };
  }

  /** The host[:port] of a URL's authority; anything more than an origin is refused. */
  private static String origin(String afterScheme, String text, String scheme) {
    // One trailing slash is how an origin is often written; it names no path.
    String authority =
        afterScheme.endsWith("/")
            ? afterScheme.substring(0, afterScheme.length() - 1)
            : afterScheme;
    for (char c : new char[] {'/', '?', '#'}) {
      if (authority.indexOf(c) >= 0) {
        throw new IllegalArgumentException(
            "'"
                + text.strip()
                + "' has a path, query or fragment; network.allow grants a host and port only:"
                + " write the origin, e.g. "
                + scheme
                + authority.substring(0, authority.indexOf(c)));
      }
    }
    if (authority.indexOf('@') >= 0) {
      throw new IllegalArgumentException(
          "'"
              + text.strip()
              + "' carries user-info (user@ or user:password@); keep credentials out of the"
              + " manifest and write "
              + scheme
              + authority.substring(authority.lastIndexOf('@') + 1));
    }
    return authority;
  }

  private static int port(String digits) {
    if (!digits.matches("\\d{1,5}")) {
      throw new IllegalArgumentException("port '" + digits + "' is not a number 1-65535");
    }
    int port = Integer.parseInt(digits);
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is outside 1-65535");
    }
    return port;
  }

  /**
   * Whether this grant allows {@code need}: the ports agree (a grant without a port allows any),
   * and the host is the same or, for a wildcard grant, a subdomain (a wildcard need must be within
   * the wildcard grant).
   */
  public boolean covers(NetworkEntry need) {
    if (port.isPresent() && !port.equals(need.port)) {
      return false;
    }
    if (!wildcard) {
      return !need.wildcard && host.equals(need.host);
    }
    return need.host.endsWith("." + host) || (need.wildcard && need.host.equals(host));
  }

  /** The normalized text form, e.g. {@code *.example.com:443}. */
  @Override
  public String toString() {
    return (wildcard ? "*." : "") + host + (port.isPresent() ? ":" + port.getAsInt() : "");
  }
}
