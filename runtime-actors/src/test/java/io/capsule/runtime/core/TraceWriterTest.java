package io.capsule.runtime.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TraceWriterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant AT = Instant.parse("2026-01-02T03:04:05Z");

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({
    "run_start, '{\"event_type\":\"run_start\",\"timestamp\":\"2026-01-02T03:04:05Z\"}'",
    "run_end, '{\"event_type\":\"run_end\",\"timestamp\":\"2026-01-02T03:04:05Z\"}'",
  })
  void writesEventTypeThenTimestampFirst(String type, String line) {
    assertEquals(line, TraceWriter.render(TraceRecord.of(type), AT));
  }

  @Test
  void writesOneJsonObjectPerLineAndKeepsNoneAsNull() throws Exception {
    StringWriter out = new StringWriter();
    TraceWriter w = TraceWriter.to(out, Clock.fixed(AT, ZoneOffset.UTC));
    w.write(TraceRecord.of("inference").with("turn", 1).with("usage_growth", usageWithNone()));
    w.write(TraceRecord.of("run_end").with("outcome", "done"));
    String[] lines = out.toString().split("\n");
    assertEquals(2, lines.length);
    JsonNode first = JSON.readTree(lines[0]);
    assertTrue(first.get("usage_growth").get("output").isNull());
    assertEquals(7, first.get("usage_growth").get("input").asInt());
    assertEquals("done", JSON.readTree(lines[1]).get("outcome").asText());
  }

  private static Map<String, Object> usageWithNone() {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("input", 7L);
    m.put("output", null);
    return m;
  }

  @Test
  void harnessStartWritesCountsAndNamesButNeverArgumentEnvOrFileValues() throws Exception {
    LaunchPlan plan =
        new LaunchPlan(
            List.of("--token", "sk-SECRET-ARG"),
            List.of(new EnvVar("API_TOKEN", "sk-SECRET-ENV")),
            List.of(new DriverFile("mcp.json", "sk-SECRET-FILE")),
            Optional.of("sk-SECRET-STDIN".getBytes(StandardCharsets.UTF_8)),
            true,
            Optional.empty());
    String line =
        TraceWriter.render(
            TraceWriter.harnessStart(
                "fake",
                "fake-harness",
                "/bin/sh",
                Optional.of("1.0"),
                true,
                new Session("s1", SessionMode.NEW),
                plan,
                List.of("HOME")),
            AT);
    assertFalse(line.contains("SECRET"), line);
    JsonNode n = JSON.readTree(line);
    assertEquals(2, n.get("args_count").asInt());
    assertEquals("API_TOKEN", n.get("env_set").get(0).asText());
    assertEquals("mcp.json", n.get("files").get(0).asText());
    assertEquals(15, n.get("stdin_bytes").asInt());
    assertEquals("new", n.get("session_mode").asText());
  }
}
