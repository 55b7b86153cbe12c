package io.capsule.runtime.harness.contain;

import java.io.IOException;

/**
 * A message that breaks HTTP/1.1's grammar (RFC 9112) where a proxy must refuse rather than guess:
 * the egress proxy answers a malformed request with a 400 and a malformed response with a 502, and
 * closes the connection. An {@link IOException} so a body copy can throw it beside the socket's own
 * errors; the message says what was wrong and where.
 */
final class MalformedHttp extends IOException {
  private static final long serialVersionUID = 1L;

  MalformedHttp(String reason) {
    super(reason);
  }
}
