package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The directories a program needs to run inside the sealed root: its own installation ({@link
 * SandboxCommand#installation}, for the path as given and its real path) and, for a script, its
 * interpreter's ({@code #!/usr/bin/env node} with {@code node} found on the program's {@code PATH},
 * or {@code #!/opt/x/bin/python}). Reads the disk: call off actor threads.
 */
final class Installations {

  /** {@code setsid}, where util-linux puts it. */
  static final Path SETSID =
      Files.isExecutable(Path.of("/usr/bin/setsid"))
          ? Path.of("/usr/bin/setsid")
          : Path.of("/bin/setsid");

  /** Longest first line read for a {@code #!}: the kernel itself reads at most 256 bytes. */
  private static final int SHEBANG_MAX = 256;

  private Installations() {}

  /** The installation of {@code binary} and of its interpreter, when it is a script. */
  static List<Path> of(Path binary, Map<String, String> env) throws IOException {
    List<Path> dirs = new ArrayList<>(SandboxCommand.installation(binary, binary.toRealPath()));
    Optional<Path> interpreter = interpreter(binary, env);
    if (interpreter.isPresent()) {
      Path i = interpreter.get();
      for (Path d : SandboxCommand.installation(i, i.toRealPath())) {
        if (!dirs.contains(d)) {
          dirs.add(d);
        }
      }
    }
    return dirs;
  }

  /** The program a {@code #!} line runs, resolved; empty for a binary or an unreadable script. */
  static Optional<Path> interpreter(Path script, Map<String, String> env) {
    byte[] head;
    try (InputStream in = Files.newInputStream(script)) {
      head = in.readNBytes(SHEBANG_MAX);
    } catch (IOException e) {
      return Optional.empty();
    }
    Optional<List<String>> words = shebang(new String(head, StandardCharsets.ISO_8859_1));
    if (words.isEmpty() || words.get().isEmpty()) {
      return Optional.empty();
    }
    List<String> w = words.get();
    Path first = Path.of(w.get(0));
    if (first.getFileName() != null
        && first.getFileName().toString().equals("env")
        && w.size() > 1) {
      String name = w.get(1).equals("-S") && w.size() > 2 ? w.get(2) : w.get(1);
      return onPath(name, env.getOrDefault("PATH", ""));
    }
    return Files.isExecutable(first) ? Optional.of(first) : Optional.empty();
  }

  /** The words of a {@code #!} line (pure), or empty when {@code head} does not start with one. */
  static Optional<List<String>> shebang(String head) {
    if (!head.startsWith("#!")) {
      return Optional.empty();
    }
    int end = head.indexOf('\n');
    String line = (end < 0 ? head : head.substring(0, end)).substring(2).strip();
    if (line.isEmpty()) {
      return Optional.of(List.of());
    }
    return Optional.of(List.of(line.split("[ \t]+")));
  }

  private static Optional<Path> onPath(String name, String path) {
    if (name.contains("/")) {
      Path p = Path.of(name);
      return p.isAbsolute() && Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
    }
    for (String dir : path.split(":")) {
      if (dir.isEmpty() || !dir.startsWith("/")) {
        continue;
      }
      Path candidate = Path.of(dir, name);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }
}
