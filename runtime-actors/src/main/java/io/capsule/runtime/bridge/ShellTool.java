package io.capsule.runtime.bridge;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One tool of the capsule: a binary granted by {@code capabilities.shell.allow}, offered on the
 * bridge under its bare name and run as {@code binary args…} (no shell).
 *
 * @param name the bare name from the manifest; the MCP tool name
 * @param binary the absolute path it resolved to on the granted PATH
 */
public record ShellTool(String name, Path binary) {
  public ShellTool {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(binary, "binary");
    if (!binary.isAbsolute()) {
      throw new IllegalArgumentException("a tool binary must be an absolute path: " + binary);
    }
  }

  /** The description shown to the model in {@code tools/list}. */
  public String description() {
    return "Runs `"
        + name
        + " <args…>` in the task's working directory, without a shell (no globbing, pipes or"
        + " variables: each array item is one argument). Optional `stdin` is written to its"
        + " standard input. Returns its standard output, then standard error; the result is an"
        + " error when the exit code is not 0.";
  }

  /**
   * Resolves each granted name on the PATH of the granted environment, in order, without
   * duplicates. The inventory is fixed here, at launch: a binary installed later is not picked up.
   *
   * @throws ToolBridgeException {@code E-TOOL-001} naming every name that does not resolve
   */
  public static List<ShellTool> resolveAll(List<String> shellAllow, Map<String, String> env) {
    List<ShellTool> tools = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (String name : new LinkedHashSet<>(shellAllow)) {
      Optional<Path> found = resolve(name, env);
      if (found.isPresent()) {
        tools.add(new ShellTool(name, found.get()));
      } else {
        missing.add(name);
      }
    }
    if (!missing.isEmpty()) {
      throw new ToolBridgeException(
          Diagnostic.of(
                  Code.E_TOOL_001,
                  "capabilities.shell.allow names "
                      + String.join(", ", missing)
                      + ", not found on the granted PATH")
              .with("path", env.getOrDefault("PATH", "(PATH not granted)")));
    }
    return List.copyOf(tools);
  }

  /**
   * The first executable regular file named {@code name} in the absolute directories of the granted
   * {@code PATH}. Relative and empty PATH entries are skipped: they would depend on the current
   * directory, which the harness (and so the model) controls.
   */
  public static Optional<Path> resolve(String name, Map<String, String> env) {
    if (name.isEmpty() || name.contains("/") || name.indexOf('\0') >= 0) {
      return Optional.empty();
    }
    String path = env.get("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(":", -1)) {
      try {
        Path d = Path.of(dir);
        if (dir.isEmpty() || !d.isAbsolute()) {
          continue;
        }
        Path candidate = d.resolve(name);
        if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
          return Optional.of(candidate);
        }
      } catch (InvalidPathException e) {
        // an entry that is no path at all cannot hold the binary; try the next one
      }
    }
    return Optional.empty();
  }
}
