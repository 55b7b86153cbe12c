package io.capsule.realharness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** What the Codex and Gemini suites share: the namespace guard, traces, leftovers, recording. */
final class Suite {
  private Suite() {}

  /** The real binary exists and only loopback is up (the suite runs in its own namespace). */
  static void requireBinaryInLoopbackOnlyNamespace(Path binary) throws SocketException {
    assertTrue(
        Files.isExecutable(binary),
        binary + " is missing: run real-harness/run-suite.sh (it installs the pinned CLIs)");
    List<String> outside =
        Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
            .filter(i -> !isLoopback(i))
            .map(NetworkInterface::getName)
            .toList();
    assertTrue(
        outside.isEmpty(),
        "the real CLI may only run in a loopback-only network namespace (run-suite.sh); found "
            + outside);
  }

  /**
   * A HOME as a user has one: private (0700), below the real user's home, so that no folder above
   * it may be written by others. A run then puts its run directory where {@code capsule run} does
   * by default ({@link #defaultRuns}); Gemini CLI reads the driver's settings there. (A JUnit temp
   * folder is below {@code /tmp}, which Gemini CLI refuses as a settings file's ancestor.)
   */
  static Path privateHome() throws IOException {
    Path base =
        Files.createDirectories(
            Path.of(System.getProperty("user.home"), ".cache", "capsule-real-harness"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    return Files.createTempDirectory(
        base,
        "home-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  /** Where {@code capsule run} puts run directories for this HOME when nothing says otherwise. */
  static Path defaultRuns(Path home) {
    return home.resolve(".local/state/capsule/runs");
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** The last record of this type in the (single) run's trace.jsonl under {@code runs}. */
  static JsonNode traceRecord(Path runs, String eventType) throws IOException {
    List<Path> traces;
    try (var files = Files.walk(runs)) {
      traces = files.filter(f -> f.getFileName().toString().equals("trace.jsonl")).toList();
    }
    assertEquals(1, traces.size(), traces::toString);
    List<String> lines = Files.readAllLines(traces.get(0), StandardCharsets.UTF_8);
    JsonNode found = null;
    for (String line : lines) {
      JsonNode n = MessageStream.JSON.readTree(line);
      if (eventType.equals(n.path("event_type").asText())) {
        found = n;
      }
    }
    if (found == null) {
      throw new AssertionError("no " + eventType + " in the trace:\n" + String.join("\n", lines));
    }
    return found;
  }

  /** Live processes whose environment holds {@code HOME=<home>} (only this run's ever do). */
  static List<Long> processesWithHome(Path home) {
    String needle = "\0HOME=" + home + "\0";
    return ProcessHandle.allProcesses()
        .filter(ProcessHandle::isAlive)
        .filter(p -> p.pid() != ProcessHandle.current().pid())
        .filter(p -> environ(p.pid()).contains(needle))
        .map(ProcessHandle::pid)
        .toList();
  }

  private static String environ(long pid) {
    try {
      byte[] env = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
      return "\0" + new String(env, StandardCharsets.UTF_8);
    } catch (IOException | SecurityException gone) {
      return "";
    }
  }

  /**
   * With {@code -Drealharness.record=DIR}, the harness command is a wrapper that copies the real
   * CLI's stdout to {@code DIR/<scenario>.jsonl} (how the driver transcripts were recorded); the
   * CLI itself is exec'd, so its pid, exit code and signals are its own. Without it, the CLI.
   */
  static Path commandFor(Path cli, Path scratch, String scenario) throws IOException {
    Optional<String> dir = Optional.ofNullable(System.getProperty("realharness.record"));
    if (dir.isEmpty() || dir.get().isBlank()) {
      return cli;
    }
    Path out = Files.createDirectories(Path.of(dir.get())).resolve(scenario + ".jsonl");
    Files.deleteIfExists(out);
    Path wrapper = scratch.resolve("record-" + scenario + ".sh");
    Files.writeString(
        wrapper,
        "#!/bin/bash\n"
            + "# The version probe is not recorded; every other call's stdout is.\n"
            + "if [ \"$1\" != --version ]; then exec > >(exec tee -i -a '"
            + out
            + "'); fi\n"
            + "exec '"
            + cli
            + "' \"$@\"\n");
    wrapper.toFile().setExecutable(true);
    return wrapper;
  }

  private static boolean isLoopback(NetworkInterface i) {
    try {
      return i.isLoopback() || !i.isUp();
    } catch (SocketException e) {
      return false;
    }
  }
}
