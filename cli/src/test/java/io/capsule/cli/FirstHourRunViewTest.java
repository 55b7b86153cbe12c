package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first hour's rough edges in what {@code capsule run} shows (issue #18): the live view and the
 * {@code --json} lines agree on turns and on usage never reported, a credential warning is printed
 * once, tool calls are compact lines, and {@code --trace-dir} says where the trace went.
 */
class FirstHourRunViewTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  @Test
  void aCredentialWarningIsPrintedOnce() throws IOException {
    Path capsule =
        FirstHourCapsules.capsule(
            tmp,
            "t",
            "allow: [PATH]\n    allow_credentials: [DEMO_TOKEN]",
            FirstHourCapsules.resultOnly());
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(0, r.exit(), r.out() + r.err());
    assertEquals(1, FirstHourCapsules.count(r.out(), "W-SEC-024"), r.out());
  }

  @Test
  void aHarnessThatAnswersWithItsResultAloneTookOneTurn() throws IOException {
    Path capsule =
        FirstHourCapsules.capsule(tmp, "t", "allow: [PATH]", FirstHourCapsules.resultOnly());
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
    Path capsule =
        FirstHourCapsules.capsule(tmp, "t", "allow: [PATH]", FirstHourCapsules.resultOnly());
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
    Path capsule = FirstHourCapsules.capsule(tmp, "t", "allow: [PATH]", harness);
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
    Path capsule = FirstHourCapsules.capsule(tmp, "t", "allow: [PATH]", harness);
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
}
