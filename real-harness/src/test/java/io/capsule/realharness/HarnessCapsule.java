package io.capsule.realharness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Writes a capsule folder on the built-in {@code codex} or {@code gemini} driver whose harness is
 * the real CLI. Credentials and endpoints go through the driver config's {@code env} (the harness
 * environment is otherwise only HOME and PATH); telemetry stays off through the drivers' default.
 */
final class HarnessCapsule {
  private final String driver;
  private final Path command;
  private final List<String> hosts;
  private final String harnessPath;
  private final Map<String, String> env = new LinkedHashMap<>();
  private final List<String> extraArgs = new ArrayList<>();
  private final Map<String, String> config = new LinkedHashMap<>();
  private Optional<String> model = Optional.empty();
  private Optional<String> systemPrompt = Optional.of(TestCapsule.SYSTEM_PROMPT);
  private List<String> shellAllow = List.of();

  private HarnessCapsule(String driver, Path command, List<String> hosts, String harnessPath) {
    this.driver = driver;
    this.command = command;
    this.hosts = new java.util.ArrayList<>(hosts);
    this.harnessPath = harnessPath;
  }

  static HarnessCapsule codex(Path command) {
    return new HarnessCapsule(
        "codex", command, List.of("api.openai.com:443", "chatgpt.com:443"), "~/.codex");
  }

  static HarnessCapsule gemini(Path command) {
    return new HarnessCapsule(
        "gemini",
        command,
        List.of(
            "generativelanguage.googleapis.com:443",
            "cloudcode-pa.googleapis.com:443",
            "oauth2.googleapis.com:443"),
        "~/.gemini");
  }

  /**
   * Adds the {@code host:port} of {@code url} (the fake API) to {@code capabilities.network.allow}:
   * a contained harness reaches nothing else through the run's egress proxy.
   */
  HarnessCapsule allow(String url) {
    java.net.URI uri = java.net.URI.create(url);
    hosts.add(uri.getHost() + ":" + uri.getPort());
    return this;
  }

  HarnessCapsule env(String name, String value) {
    env.put(name, value);
    return this;
  }

  HarnessCapsule extraArg(String arg) {
    extraArgs.add(arg);
    return this;
  }

  /** A driver config key with a YAML scalar value written as is. */
  HarnessCapsule config(String key, String yamlScalar) {
    config.put(key, yamlScalar);
    return this;
  }

  HarnessCapsule model(String model) {
    this.model = Optional.of(model);
    return this;
  }

  HarnessCapsule noSystemPrompt() {
    this.systemPrompt = Optional.empty();
    return this;
  }

  HarnessCapsule tools(String... shellAllow) {
    this.shellAllow = List.of(shellAllow);
    return this;
  }

  Path write(Path dir) throws IOException {
    Files.createDirectories(dir);
    StringBuilder y = new StringBuilder();
    y.append("name: real-")
        .append(driver)
        .append('\n')
        .append("version: 0.1.0\n")
        .append("description: The real ")
        .append(driver)
        .append(" CLI against a fake API.\n")
        .append("artifacts:\n")
        .append("  - name: ")
        .append(driver)
        .append('\n')
        .append("    version: 0.6.0\n")
        .append("    runtime: driver\n")
        .append("    builtin: ")
        .append(driver)
        .append('\n')
        .append("inference:\n")
        .append("  transport: process\n")
        .append("  driver:\n")
        .append("    artifact: ")
        .append(driver)
        .append('\n')
        .append("    config:\n");
    config.forEach((k, v) -> y.append("      ").append(k).append(": ").append(v).append('\n'));
    if (!env.isEmpty()) {
      y.append("      env:\n");
      env.forEach(
          (k, v) -> y.append("        ").append(k).append(": ").append(quoted(v)).append('\n'));
    }
    if (!extraArgs.isEmpty()) {
      y.append("      extra_args:\n");
      extraArgs.forEach(a -> y.append("        - ").append(quoted(a)).append('\n'));
    }
    if (config.isEmpty() && env.isEmpty() && extraArgs.isEmpty()) {
      y.append("      {}\n");
    }
    y.append("  command: ").append(quoted(command.toString())).append('\n');
    model.ifPresent(m -> y.append("  model: ").append(quoted(m)).append('\n'));
    y.append("  max_turns: 4\n");
    systemPrompt.ifPresent(p -> y.append("  system_prompt: ").append(quoted(p)).append('\n'));
    y.append("capabilities:\n")
        .append("  env:\n")
        .append("    allow: [HOME, PATH]\n")
        .append("  network:\n")
        .append("    allow: [");
    for (int i = 0; i < hosts.size(); i++) {
      y.append(i == 0 ? "" : ", ").append(quoted(hosts.get(i)));
    }
    y.append("]\n")
        .append("  harness:\n")
        .append("    paths:\n")
        .append("      - path: ")
        .append(harnessPath)
        .append('\n')
        .append("        access: read-write\n");
    if (!shellAllow.isEmpty()) {
      y.append("  shell:\n    allow: [").append(String.join(", ", shellAllow)).append("]\n");
    }
    y.append("lifecycle:\n  conversation: stateless\n");
    Files.writeString(dir.resolve("murmur.yaml"), y.toString());
    return dir;
  }

  private static String quoted(String s) {
    return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
