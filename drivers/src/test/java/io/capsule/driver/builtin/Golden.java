package io.capsule.driver.builtin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.StreamSupport;

/**
 * The golden transcripts shared with the Rust drivers' native tests: {@code golden/index.json}
 * names each transcript ({@code transcripts/<harness>/<name>.jsonl}, real harness stdout) with its
 * driver and how many terminal events it must give; {@code golden/<driver>/<name>.events.json}
 * holds the expected events in the canonical event JSON; every run first calls {@code launch} with
 * {@code golden/launch-request.json}, because {@code parse} may rely on what {@code launch} was
 * given.
 */
final class Golden {

  /**
   * One line at a time, pairs, an odd size that cuts messages at arbitrary places, and the
   * runtime's largest batch (docs/run-semantics.md §5).
   */
  static final List<Integer> SPLITS = List.of(1, 2, 7, 256);

  /** The bearer token of the golden launch request: it must never reach argv. */
  static final String TOKEN = "golden-token";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private Golden() {}

  /** One golden transcript. */
  record Entry(String driver, String transcripts, String name, int terminalEvents) {

    List<String> lines() {
      return framed(text("transcripts/" + transcripts + "/" + name + ".jsonl"));
    }

    String expectedText() {
      return text("golden/" + driver + "/" + name + ".events.json");
    }

    List<Event> expected() {
      return EventJson.parseArray(expectedText());
    }

    @Override
    public String toString() {
      return driver + "/" + name;
    }
  }

  static List<Entry> index() {
    JsonNode index = json("golden/index.json");
    return StreamSupport.stream(index.spliterator(), false)
        .map(
            e ->
                new Entry(
                    e.get("driver").asText(),
                    e.get("transcripts").asText(),
                    e.get("name").asText(),
                    e.get("terminal-events").asInt()))
        .toList();
  }

  static LaunchRequest launchRequest() {
    JsonNode r = json("golden/launch-request.json");
    JsonNode b = r.get("bridge");
    List<String> tools =
        StreamSupport.stream(b.get("tool-names").spliterator(), false)
            .map(JsonNode::asText)
            .toList();
    return new LaunchRequest(
        Optional.empty(),
        r.get("system-prompt").asText(),
        Optional.empty(),
        Optional.of(
            new Bridge(
                b.get("server-name").asText(),
                b.get("url").asText(),
                b.get("bearer-token").asText(),
                tools)),
        new Session(r.get("session").get("id").asText(), SessionMode.NEW),
        Optional.empty(),
        r.get("task").asText());
  }

  /** Feeds {@code lines} to {@code driver} in batches of {@code split} lines. */
  static List<Event> parse(ProcessDriver driver, List<String> lines, int split) {
    List<Event> events = new ArrayList<>();
    for (int i = 0; i < lines.size(); i += split) {
      events.addAll(driver.parse(lines.subList(i, Math.min(lines.size(), i + split))));
    }
    return events;
  }

  /**
   * The runtime's framing (docs/run-semantics.md §5): split on {@code \n}, drop one trailing {@code
   * \r}, drop the bytes after the last {@code \n}.
   */
  static List<String> framed(String text) {
    List<String> lines = new ArrayList<>();
    int start = 0;
    for (int nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      String line = text.substring(start, nl);
      lines.add(line.endsWith("\r") ? line.substring(0, line.length() - 1) : line);
      start = nl + 1;
    }
    return List.copyOf(lines);
  }

  static String text(String resource) {
    try (InputStream in = Golden.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode json(String resource) {
    try {
      return MAPPER.readTree(text(resource));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
