package io.capsule.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads a {@code launch-request} written as JSON with the WIT's kebab-case field names (the shape
 * of {@code drivers/src/test/resources/golden/launch-request.json}), for {@code driver replay
 * --launch-request}: a driver that strips a bridge prefix in parse needs the bridge it was given.
 */
final class LaunchRequestJson {
  private static final ObjectMapper JSON = new ObjectMapper();

  private LaunchRequestJson() {}

  static LaunchRequest read(Path file) {
    JsonNode n;
    try {
      n = JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw bad(file, "cannot read it as JSON: " + e.getMessage());
    }
    if (n == null || !n.isObject() || !n.path("session").isObject()) {
      throw bad(file, "it must be an object with at least \"session\" and \"task\"");
    }
    JsonNode s = n.get("session");
    Session session =
        new Session(
            s.path("id").asText(""),
            "resume".equals(s.path("mode").asText()) ? SessionMode.RESUME : SessionMode.NEW);
    Optional<Bridge> bridge = Optional.empty();
    if (n.path("bridge").isObject()) {
      JsonNode b = n.get("bridge");
      List<String> tools = new ArrayList<>();
      b.path("tool-names").forEach(t -> tools.add(t.asText()));
      bridge =
          Optional.of(
              new Bridge(
                  b.path("server-name").asText(),
                  b.path("url").asText(),
                  b.path("bearer-token").asText(),
                  tools));
    }
    return new LaunchRequest(
        text(n, "model"),
        n.path("system-prompt").asText(""),
        n.path("config").isMissingNode() || n.path("config").isNull()
            ? Optional.empty()
            : Optional.of(
                n.get("config").isTextual()
                    ? n.get("config").asText()
                    : n.get("config").toString()),
        bridge,
        session,
        text(n, "harness-version"),
        n.path("task").asText(""));
  }

  private static Optional<String> text(JsonNode n, String key) {
    return n.path(key).isTextual() ? Optional.of(n.get(key).asText()) : Optional.empty();
  }

  private static DiagnosticException bad(Path file, String why) {
    return new DiagnosticException(
        Diagnostic.of(Code.E_CLI_001, "the launch request " + file + " is unusable: " + why)
            .withHint("write the WIT launch-request as JSON with kebab-case keys"));
  }
}
