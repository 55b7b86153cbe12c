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
import java.util.LinkedHashMap;
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

  /** What the renderer wrote before it streamed: the mapper over one ordered map of the line. */
  private static String mapperLine(TraceRecord record, Instant at) throws Exception {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("event_type", record.eventType());
    line.put("timestamp", at.toString());
    line.putAll(record.fields());
    return JSON.writeValueAsString(line);
  }

  @Test
  void rendersTheSameLineTheMapperWritesForTheSameOrderedMap() throws Exception {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("input", 7L);
    nested.put("output", null);
    nested.put("list", List.of(1, "two", true));
    List<TraceRecord> records =
        List.of(
            TraceRecord.of("run_start"),
            TraceRecord.of("note")
                .with("text", "quote \" backslash \\ slash / tab \t nl \n cr \r nul \u0000")
                .with("unicode", "caf\u00e9 \u2028 \ud83d\ude00 \u007f"),
            TraceRecord.of("inference")
                .with("turn", 3)
                .with("big", Long.MAX_VALUE)
                .with("neg", Integer.MIN_VALUE)
                .with("ok", true)
                .with("no", false)
                .with("none", null)
                .with("double", 1.5)
                .with("short", (short) 4)
                .with("usage_growth", nested)
                .with("names", List.of("A", "B"))
                .with("empty", List.of()),
            TraceRecord.of("weird \" type"));
    Instant at = Instant.parse("2026-12-03T08:09:50.120Z");
    for (TraceRecord r : records) {
      assertEquals(mapperLine(r, at), TraceWriter.render(r, at));
    }
  }

  @Test
  void everyCharacterIsWrittenAsTheMapperWritesItInValuesAndNames() throws Exception {
    Instant at = Instant.parse("2026-12-03T08:09:50.120Z");
    for (int c = 0; c <= 0xFFFF; c++) {
      String s = "a" + (char) c + "b" + (char) c;
      TraceRecord r =
          TraceRecord.of(s).with(s, s).with("list", List.of(s)).with("map", Map.of(s, s));
      assertEquals(mapperLine(r, at), TraceWriter.render(r, at), "character " + c);
    }
  }

  @Test
  void randomStringsAreWrittenAsTheMapperWritesThem() throws Exception {
    java.util.Random random = new java.util.Random(15);
    Instant at = Instant.parse("2026-12-03T08:09:50Z");
    char[] picks = {
      '"', '\\', '/', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', 'x', '\u00e9', '\u2028',
      '\ud83d', '\ude00'
    };
    for (int i = 0; i < 5_000; i++) {
      StringBuilder b = new StringBuilder();
      for (int k = random.nextInt(40); k > 0; k--) {
        b.append(
            random.nextBoolean()
                ? picks[random.nextInt(picks.length)]
                : (char) random.nextInt(0x3000));
      }
      String s = b.toString();
      TraceRecord r = TraceRecord.of("note").with("text", s).with("n", random.nextLong());
      assertEquals(mapperLine(r, at), TraceWriter.render(r, at), s);
    }
  }

  @Test
  void aBatchRendersAsItsRecordsEachOnItsOwnLine() throws Exception {
    Instant at = Instant.parse("2026-12-03T08:09:50.5Z");
    List<TraceRecord> records =
        List.of(
            TraceRecord.of("tool_call").with("turn", 1).with("name", "Bash"),
            TraceRecord.of("inference").with("turn", 1).with("first_tool", null));
    StringBuilder out = new StringBuilder();
    TraceWriter.renderLines(records, Clock.fixed(at, ZoneOffset.UTC), out);
    assertEquals(
        mapperLine(records.get(0), at) + "\n" + mapperLine(records.get(1), at) + "\n",
        out.toString());
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({
    "2026-01-02T03:04:05Z",
    "2026-01-02T03:04:00Z",
    "2026-01-02T03:00:00Z",
    "1970-01-01T00:00:00Z",
    "2026-01-02T03:04:05.100Z",
    "2026-01-02T03:04:05.001Z",
    "2026-01-02T03:04:05.000100Z",
    "2026-01-02T03:04:05.000001Z",
    "2026-01-02T03:04:05.000000001Z",
    "2026-01-02T03:04:05.123456789Z",
    "2026-01-02T03:04:05.999999999Z",
    "1969-12-31T23:59:59.500Z",
    "+10000-01-01T00:00:00.5Z",
    "-0001-06-30T12:30:30.250Z",
  })
  void theTimestampIsWhatInstantToStringWrites(String text) {
    Instant at = Instant.parse(text);
    assertEquals(at.toString(), Timestamps.iso(at));
  }

  @Test
  void timestampsWithinOneSecondAndAcrossSecondsMatchInstantToString() {
    java.util.Random random = new java.util.Random(15);
    Instant t = Instant.parse("2026-12-03T08:09:50Z");
    for (int i = 0; i < 20_000; i++) {
      t =
          t.plusNanos(
              random.nextInt(3) == 0
                  ? random.nextInt(1_000) * 1_000_000L
                  : random.nextInt(50_000_000));
      assertEquals(t.toString(), Timestamps.iso(t));
    }
  }
}
