package io.capsule.protocol.token;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TokenRefused;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a runner gets its bearer token. Asked once per connection attempt (so a file that an
 * operator or a sidecar refreshes is picked up at the next reconnect). Called from the client's
 * connection logic, never concurrently with itself; implementations may block briefly (file I/O).
 */
@FunctionalInterface
public interface TokenSource {

  /** The token to present now; a refusal ({@code E-PRO-007}) when none is available. */
  String token();

  /** Always the same token. */
  static TokenSource fixed(String token) {
    return () -> token;
  }

  /** The file's content, trimmed, read again on every call. */
  static TokenSource file(Path path) {
    return () -> {
      try {
        String t = Files.readString(path, StandardCharsets.UTF_8).trim();
        if (t.isEmpty()) {
          throw new TokenRefused(Code.E_PRO_007, "the token file " + path + " is empty");
        }
        return t;
      } catch (IOException e) {
        throw new TokenRefused(Code.E_PRO_007, "cannot read the token file " + path, e);
      }
    };
  }
}
