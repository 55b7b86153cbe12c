package io.capsule.cli;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.protocol.token.ProjectTokens;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads the hub's shared token secret from a file (its text, trimmed of surrounding space). */
final class Secrets {
  private Secrets() {}

  static byte[] read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CLI_001, "cannot read the secret file " + file + ": " + e)
              .withHint("pass --secret-file with a readable file of at least 32 bytes"),
          e);
    }
    byte[] secret = text.getBytes(StandardCharsets.UTF_8);
    if (secret.length < ProjectTokens.MIN_SECRET_BYTES) {
      throw new DiagnosticException(
          Diagnostic.of(
                  Code.E_CLI_001,
                  "the secret in " + file + " has " + secret.length + " bytes, fewer than 32")
              .withHint("write a longer secret, e.g. `head -c 32 /dev/urandom | base64 > FILE`"));
    }
    return secret;
  }
}
