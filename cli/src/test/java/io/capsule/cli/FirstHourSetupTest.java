package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first hour's rough edges in setting up (issue #18): {@code doctor} on a script that is not
 * executable, a missing folder and a capsule named unlike its folder; the runner saying the same
 * mismatch; a hub on a busy port refusing in a few lines, without a stack trace.
 */
class FirstHourSetupTest {
  @TempDir Path tmp;

  @Test
  void aHarnessScriptThatIsNotExecutableGetsAChmodHint() throws IOException {
    Path capsule =
        FirstHourCapsules.capsule(tmp, "t", "allow: [PATH]", FirstHourCapsules.resultOnly());
    Path script = capsule.resolve("harness.sh");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rw-------"));
    Cli.Result r = Cli.run("doctor", capsule.toString());
    assertEquals(ExitCodes.HARNESS_UNAVAILABLE, r.exit(), r.out());
    assertTrue(r.out().contains("E-RUN-006 the harness binary " + script), r.out());
    assertTrue(r.out().contains("hint: make it executable: chmod +x " + script), r.out());
  }

  @Test
  void doctorOnAMissingFolderSaysTheFolderIsMissing() {
    Path nowhere = tmp.resolve("nowhere");
    Cli.Result r = Cli.run("doctor", nowhere.toString());
    assertEquals(ExitCodes.USAGE, r.exit());
    assertTrue(r.out().contains("E-MAN-001 there is no capsule folder " + nowhere), r.out());
    assertFalse(r.out().contains("YAML"), r.out());
  }

  @Test
  void doctorWarnsWhenTheNameDiffersFromTheFolder() throws IOException {
    Path capsule =
        FirstHourCapsules.capsule(
            tmp, "other-name", "allow: [PATH]", FirstHourCapsules.resultOnly());
    Cli.Result r = Cli.run("doctor", capsule.toString());
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("W-MAN-004 the capsule is named 'other-name'"), r.out());
    assertTrue(r.out().contains("capsule:" + capsule.getFileName()), r.out());
  }

  @Test
  void aRunnerStartNamesEveryCapsuleWhoseNameDiffersFromItsFolder() throws IOException {
    Path capsules = Files.createDirectory(tmp.resolve("capsules"));
    Path same = Files.createDirectory(capsules.resolve("same"));
    Files.writeString(
        same.resolve("murmur.yaml"), FirstHourCapsules.manifest("same", "allow: [PATH]"));
    Path differs = Files.createDirectory(capsules.resolve("differs"));
    Files.writeString(
        differs.resolve("murmur.yaml"), FirstHourCapsules.manifest("renamed", "allow: [PATH]"));
    Path broken = Files.createDirectory(capsules.resolve("broken"));
    Files.writeString(broken.resolve("murmur.yaml"), "name: [");

    List<String> warnings =
        FolderNames.mismatches(capsules).stream()
            .map(d -> d.code().id() + " " + d.message())
            .toList();
    assertEquals(1, warnings.size(), warnings.toString());
    assertTrue(
        warnings
            .get(0)
            .startsWith("W-MAN-004 the capsule is named 'renamed' but its folder is 'differs'"));
  }

  @Test
  void theRunnerCommandSaysTheMismatchWhenItStarts() throws Exception {
    Path capsules = Files.createDirectory(tmp.resolve("runner-capsules"));
    Path differs = Files.createDirectory(capsules.resolve("differs"));
    Files.writeString(
        differs.resolve("murmur.yaml"), FirstHourCapsules.manifest("renamed", "allow: [PATH]"));
    Path token = tmp.resolve("runner.token");
    String claims =
        java.util.Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString("{\"project_id\":\"demo\"}".getBytes(StandardCharsets.UTF_8));
    Files.writeString(token, "e30." + claims + ".unsigned");
    // No hub listens on port 1: the runner keeps retrying, and its start-up lines come first.
    Process runner =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                CapsuleMain.class.getName(),
                "runner",
                "--hub",
                "ws://127.0.0.1:1/v1/runner",
                "--token-file",
                token.toString(),
                "--capsules",
                capsules.toString())
            .redirectErrorStream(true)
            .start();
    CompletableFuture.runAsync(
        runner::destroyForcibly, CompletableFuture.delayedExecutor(120, TimeUnit.SECONDS));
    List<String> lines = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(runner.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        lines.add(line);
        if (line.contains("W-MAN-004")) {
          break;
        }
      }
    } finally {
      runner.destroy();
      if (!runner.waitFor(30, TimeUnit.SECONDS)) {
        runner.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
    String said = String.join("\n", lines);
    assertTrue(
        said.contains(
            "runner: W-MAN-004 the capsule is named 'renamed' but its folder is 'differs'"),
        said);
  }

  @Test
  void aHubOnABusyPortSaysSoWithoutAStackTrace() throws Exception {
    Path secret = tmp.resolve("hub.secret");
    Files.writeString(secret, "0123456789abcdef0123456789abcdef0123456789");
    try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      String listen = "127.0.0.1:" + busy.getLocalPort();
      // A separate JVM with the command's own logging configuration, as bin/capsule runs it.
      Path logback = Path.of("target/classes/logback.xml").toAbsolutePath();
      ProcessBuilder pb =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Dlogback.configurationFile=" + logback,
                  "-cp",
                  System.getProperty("java.class.path"),
                  CapsuleMain.class.getName(),
                  "hub",
                  "--listen",
                  listen,
                  "--project",
                  "demo",
                  "--secret-file",
                  secret.toString())
              .redirectErrorStream(true);
      Process hub = pb.start();
      String out = new String(hub.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(hub.waitFor(60, TimeUnit.SECONDS), "capsule hub did not exit");
      assertEquals(ExitCodes.USAGE, hub.exitValue(), out);
      assertTrue(out.contains("--listen " + listen + " cannot be bound"), out);
      assertFalse(out.contains("BindException"), out);
      assertFalse(out.contains("\tat "), out);
      // The refusal is short: the state line and the code with its hint. The hub's INFO step lines
      // (its brain starting, what it restored) are the log, not the refusal.
      assertTrue(
          out.lines().filter(l -> !l.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO .*")).count() <= 3,
          out);
    }
  }
}
