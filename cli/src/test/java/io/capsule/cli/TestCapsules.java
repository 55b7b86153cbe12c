package io.capsule.cli;

import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.runtime.hub.HubLink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Capsules the end-to-end tests write into a capsules directory: the bundled hello example and
 * small jsonl harness scripts (their file names carry a marker so a test can look for leftover
 * processes).
 */
final class TestCapsules {
  private TestCapsules() {}

  /** A runner (up to 4 runs) on {@code capsules}, returned once it is connected to the hub. */
  static RunnerNode connectedRunner(
      ActorSystem<?> system,
      CapsuleSettings settings,
      String hubUrl,
      String project,
      String token,
      Path capsules,
      Consumer<HubLink.TaskNotice> onTask)
      throws Exception {
    CompletableFuture<Void> connected = new CompletableFuture<>();
    RunnerNode runner =
        RunnerNode.start(
            system,
            settings,
            hubUrl,
            project,
            TokenSource.fixed(token),
            capsules,
            4,
            s -> {
              if (s.status() == ConnectionState.Status.CONNECTED) {
                connected.complete(null);
              }
            },
            onTask);
    connected.get(60, TimeUnit.SECONDS);
    return runner;
  }

  static List<ProcessHandle> harnessesAlive(String marker) {
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().commandLine().orElse("").contains(marker))
        .toList();
  }

  static void copyHello(Path capsules) throws IOException {
    Path dir = Files.createDirectories(capsules.resolve("hello/harness"));
    Files.copy(Cli.HELLO.resolve("murmur.yaml"), capsules.resolve("hello/murmur.yaml"));
    Path script = dir.resolve("hello.sh");
    Files.copy(Cli.HELLO.resolve("harness/hello.sh"), script);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
  }

  static void capsule(Path capsules, String name, String harness) throws IOException {
    Path dir = Files.createDirectories(capsules.resolve(name));
    Files.writeString(
        dir.resolve("murmur.yaml"),
        "name: "
            + name
            + "\nversion: 0.1.0\nartifacts:\n  - name: jsonl\n    version: 0.6.0\n"
            + "    runtime: driver\n    builtin: jsonl\ninference:\n  transport: process\n"
            + "  driver:\n    artifact: jsonl\n  command: ./"
            + name
            + "-harness-marker.sh\ncapabilities:\n  env:\n    allow: [PATH]\n");
    Path script = dir.resolve(name + "-harness-marker.sh");
    Files.writeString(script, harness);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
  }

  /** Speaks, then works for 3 min unless interrupted; SIGINT ends the turn as canceled. */
  static String slowHarness() {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "trap 'echo \"{\\\"type\\\":\\\"error\\\",\\\"kind\\\":\\\"canceled\\\",\\\"message\\\":\\\"stopped\\\"}\"; exit 130' INT\n"
        + "echo '{\"type\":\"delta\",\"text\":\"working\"}'\n"
        // 3 minutes: every test cancels it; it must outlive a hub restart (a new JVM joining its
        // cluster of one and reading its store) on a machine at load 17, which took over 30 s.
        + "i=0; while [ $i -lt 1800 ]; do sleep 0.1; i=$((i+1)); done\n"
        + "echo '{\"type\":\"result\",\"text\":\"too late\"}'\n";
  }

  /** Streams {@code n} one-word deltas, then the whole text as the result. */
  static String streamHarness(int n) {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "i=1; text=''\n"
        + "while [ $i -le "
        + n
        + " ]; do\n"
        + "  w=\"w$i\"; [ $i -gt 1 ] && w=\" w$i\"\n"
        + "  printf '{\"type\":\"delta\",\"text\":\"%s\"}\\n' \"$w\"; text=\"$text$w\"\n"
        + "  [ $((i % 20)) -eq 0 ] && sleep 0.05\n"
        + "  i=$((i+1))\n"
        + "done\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$text\"\n";
  }
}
