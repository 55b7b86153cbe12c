package io.capsule.runtime.harness.contain;

import java.util.List;

/**
 * Where a message body ends (RFC 9112 §6.3), decided from its head. Pure. The rules a proxy must
 * apply strictly, since a disagreement between it and the host about where a message ends lets one
 * request smuggle another: a request with both {@code Content-Length} and {@code
 * Transfer-Encoding}, with a transfer coding other than a final {@code chunked}, or with
 * conflicting lengths is refused.
 */
sealed interface BodyFraming {

  /** No body. */
  record None() implements BodyFraming {}

  /** Exactly {@code bytes} bytes. */
  record Length(long bytes) implements BodyFraming {}

  /** Chunks up to the zero-size chunk and the trailer section (copied as sent). */
  record Chunked() implements BodyFraming {}

  /** Everything until the sender closes (responses only). */
  record UntilClose() implements BodyFraming {}

  BodyFraming NONE = new None();
  BodyFraming CHUNKED = new Chunked();
  BodyFraming UNTIL_CLOSE = new UntilClose();

  /** A request's body (§6.3 rules 4–6; a request is never delimited by closing). */
  static BodyFraming ofRequest(HttpHead head, int minor) throws MalformedHttp {
    boolean coded = !head.all("Transfer-Encoding").isEmpty();
    boolean sized = !head.all("Content-Length").isEmpty();
    if (coded && sized) {
      throw new MalformedHttp("both Content-Length and Transfer-Encoding (RFC 9112 §6.3)");
    }
    if (coded) {
      if (minor == 0) {
        throw new MalformedHttp("Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1)");
      }
      if (!endsChunked(head.elements("Transfer-Encoding"))) {
        throw new MalformedHttp("a request's Transfer-Encoding must end with a single chunked");
      }
      return CHUNKED;
    }
    long length = contentLength(head);
    return length > 0 ? new Length(length) : NONE;
  }

  /**
   * A response's body to a request with {@code method} (§6.3 rules 1–3, 4–7): none after HEAD and
   * for 1xx, 204 and 304; chunked when the last coding is; else its length; else until close.
   */
  static BodyFraming ofResponse(HttpHead head, int status, String method) throws MalformedHttp {
    if (method.equals("HEAD") || status < 200 || status == 204 || status == 304) {
      return NONE;
    }
    List<String> codings = head.elements("Transfer-Encoding");
    if (!head.all("Transfer-Encoding").isEmpty()) {
      return endsChunked(codings) ? CHUNKED : UNTIL_CLOSE;
    }
    if (head.all("Content-Length").isEmpty()) {
      return UNTIL_CLOSE;
    }
    long length = contentLength(head);
    return length > 0 ? new Length(length) : NONE;
  }

  /** {@code chunked} once, as the last coding. */
  private static boolean endsChunked(List<String> codings) {
    return !codings.isEmpty()
        && codings.get(codings.size() - 1).equals("chunked")
        && codings.indexOf("chunked") == codings.size() - 1;
  }

  /**
   * The {@code Content-Length}, 0 when absent; repeated values must all be the same number (§6.3
   * rule 5). At most 18 digits, so it fits a long.
   */
  private static long contentLength(HttpHead head) throws MalformedHttp {
    long length = -1;
    for (HttpHead.Field f : head.all("Content-Length")) {
      for (String element : f.value().split(",", -1)) {
        String digits = element.strip();
        if (!digits.matches("[0-9]{1,18}")) {
          throw new MalformedHttp(
              "Content-Length '" + HttpHead.printable(f.value()) + "' is not a length");
        }
        long value = Long.parseLong(digits);
        if (length >= 0 && value != length) {
          throw new MalformedHttp("Content-Length values that differ");
        }
        length = value;
      }
    }
    return Math.max(0, length);
  }
}
