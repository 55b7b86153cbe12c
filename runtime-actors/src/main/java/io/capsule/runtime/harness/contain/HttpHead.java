package io.capsule.runtime.harness.contain;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The head of one HTTP/1.x message (RFC 9112 §2–§5), parsed: the start line and the field lines in
 * order, names as sent. Pure.
 *
 * <p>What a proxy must not pass on is refused ({@link MalformedHttp}) rather than repaired: an
 * obs-fold continuation line (§5.2), whitespace between a field name and its colon (§5.1), a bare
 * CR (§2.2), a control character in a value. A bare LF ends a line as CRLF does (§2.2 lets a
 * recipient accept it); what the proxy sends on is always CRLF.
 *
 * @param startLine the request line or status line, without its line ending
 * @param fields the field lines, in order
 */
record HttpHead(String startLine, List<Field> fields) {

  /** One field line; {@code value} without the optional whitespace around it. */
  record Field(String name, String value) {
    boolean is(String other) {
      return name.equalsIgnoreCase(other);
    }
  }

  /** {@code method SP request-target SP HTTP-version}; {@code minor} is the 0 or 1 of 1.x. */
  record RequestLine(String method, String target, int minor) {}

  /** {@code HTTP-version SP status-code SP [reason-phrase]}. */
  record StatusLine(int minor, int status, String reason) {}

  HttpHead {
    fields = List.copyOf(fields);
  }

  /** Parses a head: the start line and field lines, up to and including the empty line. */
  static HttpHead parse(byte[] head) throws MalformedHttp {
    String text = new String(head, StandardCharsets.ISO_8859_1);
    List<String> lines = new ArrayList<>();
    int from = 0;
    while (from < text.length()) {
      int lf = text.indexOf('\n', from);
      if (lf < 0) {
        throw new MalformedHttp("the head does not end with an empty line");
      }
      int to = lf > from && text.charAt(lf - 1) == '\r' ? lf - 1 : lf;
      String line = text.substring(from, to);
      if (line.indexOf('\r') >= 0) {
        throw new MalformedHttp("a bare CR inside a line");
      }
      if (line.isEmpty()) {
        break;
      }
      lines.add(line);
      from = lf + 1;
    }
    if (lines.isEmpty()) {
      throw new MalformedHttp("no start line");
    }
    List<Field> fields = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      fields.add(field(line));
    }
    return new HttpHead(lines.get(0), fields);
  }

  private static Field field(String line) throws MalformedHttp {
    if (line.charAt(0) == ' ' || line.charAt(0) == '\t') {
      throw new MalformedHttp("a folded field line (obs-fold), which RFC 9112 §5.2 refuses");
    }
    int colon = line.indexOf(':');
    if (colon <= 0) {
      throw new MalformedHttp("a field line without 'name:'");
    }
    String name = line.substring(0, colon);
    if (!isToken(name)) {
      throw new MalformedHttp("the field name '" + printable(name) + "' is not a token");
    }
    String value = line.substring(colon + 1).strip();
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        throw new MalformedHttp("a control character in the value of " + name);
      }
    }
    return new Field(name, value);
  }

  /** The request line, checked: a token method, a target of visible ASCII, HTTP/1.0 or 1.1. */
  RequestLine requestLine() throws MalformedHttp {
    String[] parts = startLine.split(" ", -1);
    if (parts.length != 3 || !isToken(parts[0]) || parts[1].isEmpty()) {
      throw new MalformedHttp("the request line is not METHOD TARGET HTTP/1.x");
    }
    for (int i = 0; i < parts[1].length(); i++) {
      char c = parts[1].charAt(i);
      if (c <= 0x20 || c >= 0x7f) {
        throw new MalformedHttp("the request target has a character outside visible ASCII");
      }
    }
    return new RequestLine(parts[0], parts[1], minor(parts[2]));
  }

  /** The status line, checked: HTTP/1.x and a three-digit status. */
  StatusLine statusLine() throws MalformedHttp {
    String[] parts = startLine.split(" ", 3);
    if (parts.length < 2 || !parts[1].matches("[1-9][0-9][0-9]")) {
      throw new MalformedHttp("the status line is not HTTP/1.x NNN [reason]");
    }
    return new StatusLine(
        minor(parts[0]), Integer.parseInt(parts[1]), parts.length == 3 ? parts[2] : "");
  }

  private static int minor(String version) throws MalformedHttp {
    if (version.equals("HTTP/1.1")) {
      return 1;
    }
    if (version.equals("HTTP/1.0")) {
      return 0;
    }
    throw new MalformedHttp("'" + printable(version) + "' is not HTTP/1.0 or HTTP/1.1");
  }

  /** Every field named {@code name}. */
  List<Field> all(String name) {
    return fields.stream().filter(f -> f.is(name)).toList();
  }

  /** The comma-separated elements of every field named {@code name}, lower-cased, empties out. */
  List<String> elements(String name) {
    List<String> out = new ArrayList<>();
    for (Field f : all(name)) {
      for (String element : f.value().split(",", -1)) {
        String e = element.strip().toLowerCase(Locale.ROOT);
        if (!e.isEmpty()) {
          out.add(e);
        }
      }
    }
    return out;
  }

  /**
   * The {@code Connection} options: hop-by-hop field names and {@code close}/{@code keep-alive}.
   */
  Set<String> connectionOptions() {
    return new LinkedHashSet<>(elements("Connection"));
  }

  /** A field name: {@code 1*tchar} (RFC 9110 §5.6.2). */
  static boolean isToken(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (!alnum && "!#$%&'*+-.^_`|~".indexOf(c) < 0) {
        return false;
      }
    }
    return true;
  }

  /** {@code s} for a message: control characters shown as '?', at most 64 characters. */
  static String printable(String s) {
    String cut = s.length() > 64 ? s.substring(0, 64) + "..." : s;
    return cut.replaceAll("[\\x00-\\x1f\\x7f]", "?");
  }
}
