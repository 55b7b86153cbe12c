package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  @Test
  void jsonOutputListsEveryEventOfTheHelloRunInOrder() throws IOException {
    Cli.Result r =
        Cli.run(
            "run",
            Cli.HELLO.toString(),
            "--task",
            "Say hello",
            "--json",
            "--trace-dir",
            tmp.toString());
    assertEquals(0, r.exit(), r.err());
    List<JsonNode> lines = new ArrayList<>();
    for (String line : r.out().strip().split("\n")) {
      lines.add(JSON.readTree(line));
    }
    List<String> kinds = lines.stream().map(n -> n.get("event").asText()).toList();
    assertEquals(
        List.of(
            "state_changed",
            "state_changed",
            "state_changed",
            "session_started",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_completed",
            "usage_updated",
            "state_changed",
            "finished"),
        kinds);
    assertEquals(
        List.of("accepted", "starting", "running", "finished"),
        lines.stream()
            .filter(n -> n.get("event").asText().equals("state_changed"))
            .map(n -> n.get("phase").asText())
            .toList());
    String taskId = lines.get(0).get("task_id").asText();
    assertTrue(lines.stream().allMatch(n -> n.get("task_id").asText().equals(taskId)));
    assertEquals("Hello! You asked: Say hello", lines.get(7).get("text").asText());
    StringBuilder streamed = new StringBuilder();
    lines.stream()
        .filter(n -> n.get("event").asText().equals("text_delta"))
        .forEach(
            n -> {
              assertFalse(n.has("so_far"), "a delta line carries only its delta: " + n);
              streamed.append(n.get("delta").asText());
            });
    assertEquals(lines.get(7).get("text").asText(), streamed.toString());

    JsonNode finished = lines.get(lines.size() - 1);
    assertEquals("done", finished.get("status").asText());
    assertEquals("Hello! You asked: Say hello", finished.get("result").asText());
    assertEquals(1, finished.get("turns").asInt());
    assertTrue(finished.get("code").isNull());
    JsonNode usage = finished.get("usage");
    assertTrue(usage.get("fresh_input").asLong() > 0);
    assertEquals(7, usage.get("output").asLong()); // 27 characters, a quarter rounded up
    assertEquals(0, usage.get("thinking").asLong());
    assertEquals(lines.get(8).get("usage"), usage);
    assertEquals(lines.get(3).get("session_id"), finished.get("session_id"));

    // The run directory keeps the trace, one JSON object per line from run_start to run_end.
    List<Path> traces;
    try (Stream<Path> s = Files.walk(tmp)) {
      traces = s.filter(p -> p.getFileName().toString().equals("trace.jsonl")).toList();
    }
    assertEquals(1, traces.size());
    List<String> trace = Files.readAllLines(traces.get(0));
    assertEquals("run_start", JSON.readTree(trace.get(0)).get("event_type").asText());
    assertEquals("run_end", JSON.readTree(trace.get(trace.size() - 1)).get("event_type").asText());
  }

  /** Retention (capsule.run.keep) cleans the work root, never a folder named by --trace-dir. */
  @Test
  void aTraceDirKeepsOlderRunsTheUserPutThere() throws IOException {
    // a finished run from 2001 (its name carries its start), far past the default age of 7 days
    Path old = Files.createDirectories(tmp.resolve("run-0ld-1000000000000-abc"));
    Files.writeString(
        old.resolve("trace.jsonl"),
        "{\"event_type\":\"run_start\",\"timestamp\":\"x\"}\n"
            + "{\"event_type\":\"run_end\",\"timestamp\":\"x\",\"outcome\":\"done\"}\n");
    Cli.Result r =
        Cli.run("run", Cli.HELLO.toString(), "--task", "Say hello", "--trace-dir", tmp.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(Files.exists(old.resolve("trace.jsonl")), "an older run in --trace-dir was pruned");
  }

  @Test
  void humanOutputShowsTheStreamedAnswerAndTheSummary() {
    Cli.Result r = Cli.run("run", Cli.HELLO.toString(), "--task", "Say hello");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("starting the harness"), r.out());
    assertTrue(r.out().contains("Hello! You asked: Say hello\n"), r.out());
    assertTrue(r.out().contains("✓ done in "), r.out());
    assertTrue(r.out().contains(" · 1 turn\n"), r.out());
    assertTrue(r.out().contains("tokens: fresh input "), r.out());
    assertTrue(!r.out().contains("result: "), "the streamed answer is not printed twice");
    assertTrue(!r.out().contains("\u001b["), "no colours when not on a terminal");
  }

  @Test
  void everyManifestErrorIsShownAtOnceWithExitTwo() throws IOException {
    Path capsule = capsule("name: Bad_Name\nversion: 1\nunknown_key: x\n");
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(ExitCodes.USAGE, r.exit());
    assertTrue(r.err().contains("E-MAN-002"), r.err());
    assertTrue(r.err().contains("line=1"), r.err());
    assertTrue(r.err().contains("line=3"), r.err());
    assertTrue(r.err().contains("hint: "), r.err());
  }

  @Test
  void aDriverRequiringUngrantedEnvIsRefusedWithExitThree() throws IOException {
    Path capsule =
        capsule(manifest("builtin: claude-code", "claude-code", "command: ./harness.sh", "[PATH]"));
    script(capsule.resolve("harness.sh"), "exit 0");
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x", "--json");
    assertEquals(ExitCodes.REFUSED_GRANTS, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("\"code\":\"E-CAP-019\""), r.out());
    assertTrue(r.out().contains("\"status\":\"blocked\""), r.out());
  }

  @Test
  void aMissingHarnessBinaryExitsFour() throws IOException {
    Path capsule =
        capsule(manifest("builtin: jsonl", "jsonl", "command: no-such-harness-d41d8", "[PATH]"));
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(ExitCodes.HARNESS_UNAVAILABLE, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("E-RUN-006"), r.out());
  }

  @Test
  void aFailedTurnExitsOneWithItsKind() throws IOException {
    Path capsule = capsule(manifest("builtin: jsonl", "jsonl", "command: ./harness.sh", "[PATH]"));
    script(
        capsule.resolve("harness.sh"),
        "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
            + "read -r line\n"
            + "echo '{\"type\":\"error\",\"kind\":\"quota\",\"message\":\"out of quota\"}'");
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(ExitCodes.TASK_FAILED, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("✗ failed"), r.out());
    assertTrue(r.out().contains("E-RUN-033:quota"), r.out());
  }

  private Path capsule(String yaml) throws IOException {
    Path dir = Files.createTempDirectory(tmp, "capsule");
    Files.writeString(dir.resolve("murmur.yaml"), yaml);
    return dir;
  }

  private static String manifest(String source, String artifact, String command, String env) {
    return "name: t\nversion: 0.1.0\nartifacts:\n  - name: "
        + artifact
        + "\n    version: 0.6.0\n    runtime: driver\n    "
        + source
        + "\ninference:\n  transport: process\n  driver:\n    artifact: "
        + artifact
        + "\n  "
        + command
        + "\ncapabilities:\n  env:\n    allow: "
        + env
        + "\n";
  }

  private static void script(Path file, String body) throws IOException {
    Files.writeString(file, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
  }
}
