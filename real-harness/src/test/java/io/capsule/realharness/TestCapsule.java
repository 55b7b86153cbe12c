package io.capsule.realharness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Writes a capsule folder whose harness is the real {@code claude} through the built-in {@code
 * claude-code} driver, pointed at the fake API. The API key is a dummy passed through the driver
 * config's {@code env} (the harness environment is otherwise only HOME and PATH); telemetry stays
 * off through the driver's default ({@code telemetry: false}).
 */
final class TestCapsule {
  static final String SYSTEM_PROMPT = "You are the capsule real-harness test. Answer briefly.";
  static final String API_KEY = "sk-ant-api03-capsule-real-harness-dummy";

  private TestCapsule() {}

  /**
   * @param maxRetries the driver's {@code max_retries} ({@code CLAUDE_CODE_MAX_RETRIES})
   * @param shellAllow binaries offered as tools through the bridge (empty: no tools)
   */
  static Path write(Path dir, Path claude, String baseUrl, int maxRetries, List<String> shellAllow)
      throws IOException {
    return write(dir, claude, baseUrl, maxRetries, shellAllow, List.of(hostPort(baseUrl)));
  }

  /**
   * As above with {@code capabilities.network.allow} = api.anthropic.com:443 (the driver's need)
   * plus {@code allowAlso}: the fake API's {@code host:port} for a contained harness to reach it.
   */
  static Path write(
      Path dir,
      Path claude,
      String baseUrl,
      int maxRetries,
      List<String> shellAllow,
      List<String> allowAlso)
      throws IOException {
    return write(
        dir,
        claude,
        baseUrl,
        maxRetries,
        shellAllow,
        allowAlso,
        Map.of("ANTHROPIC_API_KEY", API_KEY));
  }

  /**
   * The subscription capsule: no key at all, so Claude Code uses the sign-in saved in {@code
   * ~/.claude} (granted read-write), or the token in {@code auth} (e.g. {@code
   * CLAUDE_CODE_OAUTH_TOKEN}) when given.
   */
  static Path writeSubscription(Path dir, Path claude, String baseUrl, Map<String, String> auth)
      throws IOException {
    return write(dir, claude, baseUrl, 0, List.of(), List.of(hostPort(baseUrl)), auth);
  }

  private static Path write(
      Path dir,
      Path claude,
      String baseUrl,
      int maxRetries,
      List<String> shellAllow,
      List<String> allowAlso,
      Map<String, String> auth)
      throws IOException {
    Files.createDirectories(dir);
    StringBuilder y = new StringBuilder();
    y.append("name: real-claude\n")
        .append("version: 0.1.0\n")
        .append("description: The real Claude Code CLI against a fake Messages API.\n")
        .append("artifacts:\n")
        .append("  - name: claude-code\n")
        .append("    version: 0.6.0\n")
        .append("    runtime: driver\n")
        .append("    builtin: claude-code\n")
        .append("inference:\n")
        .append("  transport: process\n")
        .append("  driver:\n")
        .append("    artifact: claude-code\n")
        .append("    config:\n")
        .append("      max_retries: ")
        .append(maxRetries)
        .append('\n')
        .append("      env:\n")
        .append("        ANTHROPIC_BASE_URL: ")
        .append(quoted(baseUrl))
        .append('\n');
    auth.forEach(
        (name, value) ->
            y.append("        ").append(name).append(": ").append(quoted(value)).append('\n'));
    y.append("  command: ")
        .append(quoted(claude.toString()))
        .append('\n')
        .append("  max_turns: 4\n")
        .append("  system_prompt: ")
        .append(quoted(SYSTEM_PROMPT))
        .append('\n')
        .append("capabilities:\n")
        .append("  env:\n")
        .append("    allow: [HOME, PATH]\n")
        .append("  network:\n")
        .append("    allow: [\"api.anthropic.com:443\"")
        .append(allowAlso.stream().map(h -> ", " + quoted(h)).reduce("", String::concat))
        .append("]\n")
        .append("  harness:\n")
        .append("    paths:\n")
        .append("      - path: ~/.claude\n")
        .append("        access: read-write\n");
    if (!shellAllow.isEmpty()) {
      y.append("  shell:\n    allow: [").append(String.join(", ", shellAllow)).append("]\n");
    }
    y.append("lifecycle:\n  conversation: stateless\n");
    Files.writeString(dir.resolve("murmur.yaml"), y.toString());
    return dir;
  }

  /** {@code host:port} of an http URL. */
  static String hostPort(String url) {
    java.net.URI u = java.net.URI.create(url);
    return u.getHost() + ":" + u.getPort();
  }

  private static String quoted(String s) {
    return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
