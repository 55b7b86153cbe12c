package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The rough edges a new user met in their first hour (issue #18), each pinned: the command's own
 * help, the right code and hint for each mistake, and what the live view and {@code --json} say.
 */
class FirstHourTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  @Test
  void helpIsACommandThatListsTheCommandsAndHelpsWithEach() {
    Cli.Result all = Cli.run("help");
    assertEquals(0, all.exit(), all.err());
    for (String command : List.of("run", "doctor", "driver", "hub", "runner")) {
      assertTrue(all.out().contains("  " + command + " "), command + " in\n" + all.out());
    }
    Cli.Result run = Cli.run("help", "run");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().contains("--task-file"), run.out());
  }

  @Test
  void everyOptionAndArgumentOfEveryCommandIsDescribed() {
    List<String> bare = new ArrayList<>();
    collectUndescribed(CapsuleMain.commandLine().getCommandSpec(), bare);
    assertTrue(bare.isEmpty(), "undescribed: " + bare);
  }

  @Test
  void anUnknownBuiltInDriverIsMissingAndTheBuiltInsAreListed() {
    Cli.Result r = Cli.run("driver", "describe", "builtin:nope");
    assertEquals(ExitCodes.HARNESS_UNAVAILABLE, r.exit());
    assertTrue(r.err().startsWith("E-RUN-006 there is no built-in driver 'nope'"), r.err());
    for (String name : List.of("claude-code", "codex", "gemini", "jsonl")) {
      assertTrue(r.err().contains("builtin:" + name), r.err());
    }
    assertFalse(r.err().contains("sha256"), "no unrelated hint: " + r.err());
  }

  @Test
  void anUnknownEngineBlamesTheOptionNotApplicationConf() {
    Cli.Result r = Cli.run("driver", "describe", "builtin:jsonl", "--engine", "foo");
    assertEquals(ExitCodes.USAGE, r.exit());
    assertTrue(r.err().startsWith("E-CLI-001 --engine 'foo' is not an engine"), r.err());
    assertTrue(r.err().contains("--engine wasmtime or --engine chicory"), r.err());
    assertFalse(r.err().contains("application.conf"), r.err());
    assertFalse(r.err().contains("hardcoded"), r.err());
  }

  @Test
  void aMissingTranscriptIsACommandLineErrorNotASettingsError() {
    Path missing = tmp.resolve("no-such-transcript.jsonl");
    Cli.Result r = Cli.run("driver", "replay", "builtin:jsonl", missing.toString());
    assertEquals(ExitCodes.USAGE, r.exit());
    assertTrue(r.err().startsWith("E-CLI-001 cannot read the transcript " + missing), r.err());
  }

  @Test
  void aHarnessScriptThatIsNotExecutableGetsAChmodHint() throws IOException {
    Path capsule = capsule("t", "allow: [PATH]", resultOnly());
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
    Path capsule = capsule("other-name", "allow: [PATH]", resultOnly());
    Cli.Result r = Cli.run("doctor", capsule.toString());
    assertEquals(0, r.exit(), r.out());
    assertTrue(r.out().contains("W-MAN-004 the capsule is named 'other-name'"), r.out());
    assertTrue(r.out().contains("capsule:" + capsule.getFileName()), r.out());
  }

  @Test
  void aRunnerStartNamesEveryCapsuleWhoseNameDiffersFromItsFolder() throws IOException {
    Path capsules = Files.createDirectory(tmp.resolve("capsules"));
    Path same = Files.createDirectory(capsules.resolve("same"));
    Files.writeString(same.resolve("murmur.yaml"), manifest("same", "allow: [PATH]"));
    Path differs = Files.createDirectory(capsules.resolve("differs"));
    Files.writeString(differs.resolve("murmur.yaml"), manifest("renamed", "allow: [PATH]"));
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
    Files.writeString(differs.resolve("murmur.yaml"), manifest("renamed", "allow: [PATH]"));
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
  void aCredentialWarningIsPrintedOnce() throws IOException {
    Path capsule = capsule("t", "allow: [PATH]\n    allow_credentials: [DEMO_TOKEN]", resultOnly());
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(0, r.exit(), r.out() + r.err());
    assertEquals(1, count(r.out(), "W-SEC-024"), r.out());
  }

  @Test
  void aHarnessThatAnswersWithItsResultAloneTookOneTurn() throws IOException {
    Path capsule = capsule("t", "allow: [PATH]", resultOnly());
    Cli.Result live = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(0, live.exit(), live.out() + live.err());
    assertTrue(live.out().contains(" · 1 turn\n"), live.out());
    assertFalse(live.out().contains("0 turns"), live.out());

    Cli.Result json = Cli.run("run", capsule.toString(), "--task", "x", "--json");
    assertEquals(0, json.exit(), json.err());
    List<String> lines = json.out().lines().toList();
    JsonNode finished = JSON.readTree(lines.get(lines.size() - 1));
    assertEquals("hi", finished.get("result").asText());
    assertEquals(1, finished.get("turns").asInt(), finished.toString());
  }

  @Test
  void usageThatWasNeverReportedIsShownAsNotReportedInBothViews() throws IOException {
    Path capsule = capsule("t", "allow: [PATH]", resultOnly());
    Cli.Result live = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(0, live.exit(), live.out() + live.err());
    assertTrue(live.out().contains("tokens: not reported by the harness\n"), live.out());
    assertFalse(live.out().contains("fresh input 0"), live.out());

    Cli.Result json = Cli.run("run", capsule.toString(), "--task", "x", "--json");
    assertEquals(0, json.exit(), json.err());
    List<String> lines = json.out().lines().toList();
    JsonNode finished = JSON.readTree(lines.get(lines.size() - 1));
    assertEquals("finished", finished.get("event").asText());
    assertTrue(finished.get("usage").isNull(), finished.toString());
  }

  @Test
  void membersTheHarnessDidNotReportAreNotReportedMemberByMemberAndZerosStayZero()
      throws IOException {
    String harness =
        "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
            + "read -r line\n"
            + "echo '{\"type\":\"result\",\"text\":\"hi\","
            + "\"usage\":{\"fresh_input\":12,\"cache_read\":0,\"output\":5}}'";
    Path capsule = capsule("t", "allow: [PATH]", harness);
    Cli.Result live = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(0, live.exit(), live.out() + live.err());
    assertTrue(
        live.out()
            .contains(
                "tokens: fresh input 12, cache read 0, output 5"
                    + " · not reported: cache write, thinking\n"),
        live.out());

    Cli.Result json = Cli.run("run", capsule.toString(), "--task", "x", "--json");
    assertEquals(0, json.exit(), json.err());
    List<JsonNode> lines = new ArrayList<>();
    for (String line : json.out().lines().toList()) {
      lines.add(JSON.readTree(line));
    }
    JsonNode updated =
        lines.stream()
            .filter(n -> n.get("event").asText().equals("usage_updated"))
            .findFirst()
            .get();
    JsonNode finished = lines.get(lines.size() - 1);
    for (JsonNode usage : List.of(updated.get("usage"), finished.get("usage"))) {
      assertEquals(12, usage.get("fresh_input").asLong(), usage.toString());
      assertTrue(usage.get("cache_read").isIntegralNumber(), "a reported 0 stays 0: " + usage);
      assertEquals(0, usage.get("cache_read").asLong());
      assertEquals(5, usage.get("output").asLong());
      assertTrue(usage.get("cache_write").isNull(), usage.toString());
      assertTrue(usage.get("thinking").isNull(), usage.toString());
    }
  }

  @Test
  void toolCallsAndResultsAreCompactLinesInTheLiveView() throws IOException {
    String harness =
        "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
            + "read -r line\n"
            + "echo '{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"grep\","
            + "\"input\":{\"args\":[\"-n\",\"main\"]}}'\n"
            + "echo '{\"type\":\"tool_result\",\"id\":\"c1\",\"output\":\"App.java:3: main\"}'\n"
            + "echo '{\"type\":\"result\",\"text\":\"found it\"}'";
    Path capsule = capsule("t", "allow: [PATH]", harness);
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("⚙ grep {\"args\":[\"-n\",\"main\"]}\n"), r.out());
    assertTrue(r.out().contains("  ↳ App.java:3: main\n"), r.out());
  }

  @Test
  void reportedUsageIsStillShownWithItsNumbers() {
    Cli.Result r = Cli.run("run", Cli.HELLO.toString(), "--task", "Say hello");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("tokens: fresh input "), r.out());
  }

  @Test
  void traceDirPrintsWhereTheRunDirectoryWent() throws IOException {
    Path traces = Files.createDirectory(tmp.resolve("traces"));
    Cli.Result r =
        Cli.run(
            "run", Cli.HELLO.toString(), "--task", "Say hello", "--trace-dir", traces.toString());
    assertEquals(0, r.exit(), r.err());
    Matcher m = Pattern.compile("(?m)^trace: (.+)$").matcher(r.out());
    assertTrue(m.find(), r.out());
    Path trace = Path.of(m.group(1));
    assertEquals(traces.toAbsolutePath(), trace.getParent().getParent());
    assertTrue(Files.readString(trace).contains("\"run_end\""), trace.toString());

    Cli.Result json =
        Cli.run(
            "run",
            Cli.HELLO.toString(),
            "--task",
            "Say hello",
            "--json",
            "--trace-dir",
            traces.toString());
    assertEquals(0, json.exit(), json.err());
    assertTrue(json.err().startsWith("trace: " + traces.toAbsolutePath()), json.err());
    assertFalse(json.out().contains("trace: "), "the JSON lines stay JSON");
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

  private static void collectUndescribed(CommandSpec spec, List<String> bare) {
    for (ArgSpec arg : spec.args()) {
      boolean described =
          arg.description().length > 0 && !String.join("", arg.description()).isBlank();
      if (!described) {
        bare.add(spec.qualifiedName() + " " + arg.paramLabel() + describe(arg));
      }
    }
    for (CommandLine sub : spec.subcommands().values()) {
      collectUndescribed(sub.getCommandSpec(), bare);
    }
  }

  private static String describe(ArgSpec arg) {
    return arg.isOption()
        ? " (" + String.join("/", ((CommandLine.Model.OptionSpec) arg).names()) + ")"
        : "";
  }

  private static int count(String text, String what) {
    int n = 0;
    for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
      n++;
    }
    return n;
  }

  /** A harness that answers with a result and nothing else: no text, no usage. */
  private static String resultOnly() {
    return "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r line\n"
        + "echo '{\"type\":\"result\",\"text\":\"hi\"}'";
  }

  /** A capsule folder named {@code t-…}, holding a jsonl manifest and {@code harness.sh}. */
  private Path capsule(String name, String env, String harness) throws IOException {
    Path dir = Files.createTempDirectory(tmp, "t-");
    Files.writeString(dir.resolve("murmur.yaml"), manifest(name, env));
    Path script = dir.resolve("harness.sh");
    Files.writeString(script, "#!/bin/sh\n" + harness + "\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    return dir;
  }

  private static String manifest(String name, String env) {
    return "name: "
        + name
        + "\nversion: 0.1.0\nartifacts:\n  - name: jsonl\n    version: 0.6.0\n    runtime: driver\n"
        + "    builtin: jsonl\ninference:\n  transport: process\n  driver:\n    artifact: jsonl\n"
        + "  command: ./harness.sh\ncapabilities:\n  env:\n    "
        + env
        + "\n";
  }
}
