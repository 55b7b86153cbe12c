package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C on a real {@code capsule run} process, its harness contained: the run is canceled the
 * graceful way (through the sandbox), the outcome line is still printed, the exit code is 1 and the
 * harness is gone.
 */
class CtrlCTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path capsule;

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void ctrlCCancelsTheRunAndStillPrintsTheOutcome() throws Exception {
    Files.writeString(
        capsule.resolve("murmur.yaml"),
        "name: slow\nversion: 0.1.0\nartifacts:\n  - name: jsonl\n    version: 0.6.0\n"
            + "    runtime: driver\n    builtin: jsonl\ninference:\n  transport: process\n"
            + "  driver:\n    artifact: jsonl\n  command: ./ctrl-c-harness-marker.sh\n"
            + "capabilities:\n  env:\n    allow: [PATH]\n");
    Path harness = capsule.resolve("ctrl-c-harness-marker.sh");
    Files.writeString(
        harness,
        "#!/bin/sh\n"
            + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
            + "read -r turn\n"
            + "trap 'echo \"{\\\"type\\\":\\\"error\\\",\\\"kind\\\":\\\"canceled\\\",\\\"message\\\":\\\"stopped\\\"}\"; exit 130' INT\n"
            + "echo '{\"type\":\"delta\",\"text\":\"working\"}'\n"
            + "i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n");
    Files.setPosixFilePermissions(harness, PosixFilePermissions.fromString("rwx------"));

    // env --default-signal: a JVM started with SIGINT ignored (a background CI job) would
    // otherwise never see Ctrl-C.
    ProcessBuilder command =
        new ProcessBuilder(
                "/usr/bin/env",
                "--default-signal=INT",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                CapsuleMain.class.getName(),
                "run",
                capsule.toString(),
                "--task",
                "wait",
                "--json")
            .redirectError(ProcessBuilder.Redirect.DISCARD);
    // In the sandbox (CI installs bubblewrap and socat): the SIGINT must reach the harness there.
    command.environment().put("CAPSULE_HARNESS_CONTAINMENT", "required");
    Process cli = command.start();
    List<JsonNode> lines = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(cli.getInputStream(), StandardCharsets.UTF_8))) {
      boolean interrupted = false;
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        JsonNode n = JSON.readTree(line);
        lines.add(n);
        if (!interrupted && n.get("event").asText().equals("text_delta")) {
          interrupted = true;
          new ProcessBuilder("kill", "-INT", Long.toString(cli.pid())).start().waitFor();
        }
      }
    }
    assertTrue(cli.waitFor(60, TimeUnit.SECONDS));
    assertEquals(ExitCodes.TASK_FAILED, cli.exitValue());
    JsonNode last = lines.get(lines.size() - 1);
    assertEquals("finished", last.get("event").asText(), lines.toString());
    assertEquals("failed", last.get("status").asText());
    assertEquals("canceled", last.get("failure_type").asText());
    assertTrue(
        ProcessHandle.allProcesses()
            .noneMatch(p -> p.info().commandLine().orElse("").contains("ctrl-c-harness-marker")),
        "the harness outlived the canceled run");
  }
}
