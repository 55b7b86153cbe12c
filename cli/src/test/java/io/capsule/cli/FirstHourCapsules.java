package io.capsule.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The small jsonl capsules the first-hour tests ({@code FirstHour*Test}) write: a manifest naming
 * the built-in jsonl driver and a {@code harness.sh} script given as text.
 */
final class FirstHourCapsules {
  private FirstHourCapsules() {}

  /** How many times {@code what} occurs in {@code text}. */
  static int count(String text, String what) {
    int n = 0;
    for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
      n++;
    }
    return n;
  }

  /** A harness that answers with a result and nothing else: no text, no usage. */
  static String resultOnly() {
    return "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r line\n"
        + "echo '{\"type\":\"result\",\"text\":\"hi\"}'";
  }

  /** A capsule folder named {@code t-…}, holding a jsonl manifest and {@code harness.sh}. */
  static Path capsule(Path tmp, String name, String env, String harness) throws IOException {
    Path dir = Files.createTempDirectory(tmp, "t-");
    Files.writeString(dir.resolve("murmur.yaml"), manifest(name, env));
    Path script = dir.resolve("harness.sh");
    Files.writeString(script, "#!/bin/sh\n" + harness + "\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    return dir;
  }

  static String manifest(String name, String env) {
    return "name: "
        + name
        + "\nversion: 0.1.0\nartifacts:\n  - name: jsonl\n    version: 0.6.0\n    runtime: driver\n"
        + "    builtin: jsonl\ninference:\n  transport: process\n  driver:\n    artifact: jsonl\n"
        + "  command: ./harness.sh\ncapabilities:\n  env:\n    "
        + env
        + "\n";
  }
}
