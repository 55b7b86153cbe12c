package io.capsule.driver.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The canonical event JSON: one row per event case (both ways), and the refusals. */
class EventJsonTest {
  static final ObjectMapper MAPPER = new ObjectMapper();

  static Stream<Arguments> rows() {
    return Stream.of(
        row(
            new Event.SessionStarted(new SessionInfo("s-1", "api-key", Optional.empty())),
            "{\"type\":\"session-started\",\"id\":\"s-1\",\"auth\":\"api-key\",\"model\":null}"),
        row(
            new Event.SessionStarted(new SessionInfo("s-2", "subscription", Optional.of("opus"))),
            "{\"type\":\"session-started\",\"id\":\"s-2\",\"auth\":\"subscription\",\"model\":\"opus\"}"),
        row(new Event.TextDelta("Hel"), "{\"type\":\"text-delta\",\"value\":\"Hel\"}"),
        row(new Event.Text("wörld 😀"), "{\"type\":\"text\",\"value\":\"wörld 😀\"}"),
        row(new Event.ThinkingDelta(""), "{\"type\":\"thinking-delta\",\"value\":\"\"}"),
        row(new Event.Thinking("a\nb"), "{\"type\":\"thinking\",\"value\":\"a\\nb\"}"),
        row(
            new Event.ToolCall(new ToolCallInfo("c1", "echo", "{\"x\":1}")),
            "{\"type\":\"tool-call\",\"id\":\"c1\",\"name\":\"echo\",\"input\":\"{\\\"x\\\":1}\"}"),
        row(
            new Event.ToolResult(new ToolResultInfo("c1", "ok", false)),
            "{\"type\":\"tool-result\",\"id\":\"c1\",\"output\":\"ok\",\"is-error\":false}"),
        row(
            new Event.Retry(new RetryInfo(1, "529")),
            "{\"type\":\"retry\",\"attempt\":1,\"reason\":\"529\"}"),
        row(
            new Event.Retry(new RetryInfo(0xffff_ffffL, "")),
            "{\"type\":\"retry\",\"attempt\":4294967295,\"reason\":\"\"}"),
        row(
            new Event.UsageReport(
                new Usage(
                    Optional.of(12L),
                    Optional.empty(),
                    Optional.of(0L),
                    Optional.empty(),
                    Optional.of(-1L))),
            "{\"type\":\"usage\",\"input\":12,\"output\":null,\"cache-read\":0,"
                + "\"cache-creation\":null,\"thinking\":18446744073709551615}"),
        row(new Event.TurnEnd("done"), "{\"type\":\"turn-end\",\"value\":\"done\"}"),
        row(
            new Event.TurnFailed(new TurnFailure(FailureKind.AUTH, "sign in")),
            "{\"type\":\"turn-failed\",\"kind\":\"auth\",\"message\":\"sign in\"}"),
        row(
            new Event.TurnFailed(new TurnFailure(FailureKind.HARNESS_ERROR, "x")),
            "{\"type\":\"turn-failed\",\"kind\":\"harness-error\",\"message\":\"x\"}"),
        row(new Event.Note("n"), "{\"type\":\"note\",\"value\":\"n\"}"),
        row(
            new Event.Note("\u001b[31mred\u001b[0m\t\u0000\u007f\b\f\r"),
            "{\"type\":\"note\",\"value\":\"\\u001b[31mred\\u001b[0m\\t\\u0000\u007f\\b\\f\\r\"}"),
        row(
            new Event.ToolCallStarted(new ToolCallStart("c2", "search")),
            "{\"type\":\"tool-call-started\",\"id\":\"c2\",\"name\":\"search\"}"),
        row(
            new Event.ToolCallProgressed(new ToolCallProgress("c2", 4096)),
            "{\"type\":\"tool-call-progress\",\"id\":\"c2\",\"input-bytes\":4096}"),
        row(
            new Event.Quota(
                List.of(
                    new QuotaWindow(
                        "five-hour",
                        Optional.of(0.5),
                        Optional.of(1767225600000L),
                        Optional.of(300L),
                        Optional.of(QuotaState.OK)),
                    new QuotaWindow(
                        "seven-day",
                        Optional.of(Double.NaN),
                        Optional.empty(),
                        Optional.empty(),
                        Optional.empty()))),
            "{\"type\":\"quota\",\"windows\":[{\"name\":\"five-hour\",\"used\":0.5,"
                + "\"resets-at\":1767225600000,\"window-minutes\":300,\"state\":\"ok\"},"
                + "{\"name\":\"seven-day\",\"used\":\"NaN\",\"resets-at\":null,"
                + "\"window-minutes\":null,\"state\":null}]}"),
        row(new Event.Quota(List.of()), "{\"type\":\"quota\",\"windows\":[]}"),
        row(
            new Event.SuggestedPrompt("Echo again."),
            "{\"type\":\"suggested-prompt\",\"value\":\"Echo again.\"}"));
  }

  static Arguments row(Event event, String json) {
    return Arguments.of(event, json);
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("rows")
  void writesTheCanonicalObject(Event event, String json) {
    assertEquals(json, EventJson.compact(EventJson.toJson(event)));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("rows")
  void readsTheCanonicalObjectBack(Event event, String json) throws IOException {
    assertEquals(event, EventJson.fromJson(MAPPER.readTree(json)));
  }

  @Test
  void everyEventCaseHasARow() {
    List<String> covered = rows().map(a -> ((Event) a.get()[0]).witName()).distinct().toList();
    assertEquals(16, covered.size(), covered.toString());
  }

  @Test
  void writesOneEventPerLineInAnArray() {
    List<Event> events =
        List.of(
            new Event.Text("a"),
            new Event.TurnFailed(new TurnFailure(FailureKind.QUOTA, "used up")));

    String text = EventJson.toPrettyLines(events);

    assertEquals(
        "[\n"
            + "  {\"type\":\"text\",\"value\":\"a\"},\n"
            + "  {\"type\":\"turn-failed\",\"kind\":\"quota\",\"message\":\"used up\"}\n"
            + "]\n",
        text);
    assertEquals(events, EventJson.parseArray(text));
    assertEquals(events, EventJson.fromJsonArray(EventJson.toJson(events)));
  }

  @Test
  void writesAnEmptyListAsEmptyBrackets() {
    assertEquals("[]\n", EventJson.toPrettyLines(List.of()));
    assertEquals(List.of(), EventJson.parseArray("[]\n"));
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of("[1]", "event 0: an event must be a JSON object"),
        Arguments.of("{}", "must be a JSON array"),
        Arguments.of("[{\"value\":\"x\"}]", "event.type must be a string"),
        Arguments.of("[{\"type\":\"txt\",\"value\":\"x\"}]", "unknown event type \"txt\""),
        Arguments.of("[{\"type\":\"text\"}]", "text.value is missing"),
        Arguments.of("[{\"type\":\"text\",\"value\":1}]", "text.value must be a string"),
        Arguments.of(
            "[{\"type\":\"text\",\"value\":\"x\",\"extra\":1}]",
            "text.extra is not a field of this event"),
        Arguments.of(
            "[{\"type\":\"tool-result\",\"id\":\"a\",\"output\":\"b\",\"is-error\":\"no\"}]",
            "tool-result.is-error must be true or false"),
        Arguments.of(
            "[{\"type\":\"tool-call-progress\",\"id\":\"a\",\"input-bytes\":-1}]",
            "tool-call-progress.input-bytes must be an integer from 0 to 2^64-1"),
        Arguments.of(
            "[{\"type\":\"tool-call-progress\",\"id\":\"a\",\"input-bytes\":18446744073709551616}]",
            "must be an integer from 0 to 2^64-1"),
        Arguments.of(
            "[{\"type\":\"tool-call-progress\",\"id\":\"a\",\"input-bytes\":1.5}]",
            "must be an integer from 0 to 2^64-1"),
        Arguments.of(
            "[{\"type\":\"retry\",\"attempt\":4294967296,\"reason\":\"\"}]",
            "retry.attempt must be an integer from 0 to 2^32-1"),
        Arguments.of(
            "[{\"type\":\"turn-failed\",\"kind\":\"tired\",\"message\":\"\"}]",
            "turn-failed.kind has no case \"tired\""),
        Arguments.of(
            "[{\"type\":\"usage\",\"input\":1,\"output\":null,\"cache-read\":null,"
                + "\"cache-creation\":null}]",
            "usage.thinking is missing"),
        Arguments.of(
            "[{\"type\":\"quota\",\"windows\":[{\"name\":\"w\",\"used\":null,\"resets-at\":null,"
                + "\"window-minutes\":null,\"state\":\"full\"}]}]",
            "quota.windows[0].state has no case"),
        Arguments.of(
            "[{\"type\":\"quota\",\"windows\":[{\"name\":\"w\",\"used\":true,\"resets-at\":null,"
                + "\"window-minutes\":null,\"state\":null}]}]",
            "quota.windows[0].used must be a number"),
        Arguments.of("[", "not JSON"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void refusesAnythingButTheCanonicalForm(String json, String expected) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> EventJson.parseArray(json));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  /** Every golden event file on the test classpath is exactly what this writer writes. */
  @TestFactory
  Stream<DynamicTest> goldenFilesAreInTheCanonicalLayout() throws IOException, URISyntaxException {
    URL root = getClass().getClassLoader().getResource("golden");
    if (root == null) {
      return Stream.empty();
    }
    List<Path> files;
    try (Stream<Path> walk = Files.walk(Path.of(root.toURI()))) {
      files = walk.filter(p -> p.toString().endsWith(".events.json")).sorted().toList();
    }
    return files.stream()
        .map(
            file ->
                DynamicTest.dynamicTest(
                    file.getParent().getFileName() + "/" + file.getFileName(),
                    () -> {
                      String text = read(file);
                      assertEquals(text, EventJson.toPrettyLines(EventJson.parseArray(text)));
                    }));
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
