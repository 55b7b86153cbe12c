package io.capsule.driver.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The canonical JSON of {@link Event}s, shared with the Rust drivers' {@code json.rs} (golden
 * files, traces, the {@code driver} CLI): one object per event; {@code "type"} is the WIT case
 * name; a string payload sits under {@code "value"}; a record payload is flattened beside {@code
 * "type"} with the WIT field names (kebab-case) in WIT order; an option is {@code null} when
 * absent; enums are their WIT names; {@code u64}s are unsigned JSON integers; a non-finite {@code
 * f64} (which JSON cannot spell) is the string {@code "NaN"}, {@code "Infinity"} or {@code
 * "-Infinity"}. {@code quota} holds its windows under {@code "windows"}.
 *
 * <p>Reading is strict, so a typo in a golden file fails instead of passing silently: every field
 * must be present with its type ({@code null} only for an option) and no other field may appear. A
 * refusal is an {@link IllegalArgumentException} naming the event type and field. Thread-safe.
 */
public final class EventJson {
  private EventJson() {}

  private static final ObjectMapper MAPPER = new ObjectMapper();

  static {
    MAPPER.getFactory().setCharacterEscapes(new SerdeEscapes());
  }

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** The event as its canonical JSON object. */
  public static ObjectNode toJson(Event event) {
    ObjectNode o = NODES.objectNode().put("type", event.witName());
    if (event instanceof Event.SessionStarted s) {
      o.put("id", s.info().id()).put("auth", s.info().auth());
      o.put("model", s.info().model().orElse(null));
    } else if (event instanceof Event.TextDelta t) {
      o.put("value", t.text());
    } else if (event instanceof Event.Text t) {
      o.put("value", t.text());
    } else if (event instanceof Event.ThinkingDelta t) {
      o.put("value", t.text());
    } else if (event instanceof Event.Thinking t) {
      o.put("value", t.text());
    } else if (event instanceof Event.ToolCall c) {
      o.put("id", c.call().id()).put("name", c.call().name()).put("input", c.call().input());
    } else if (event instanceof Event.ToolResult r) {
      ToolResultInfo i = r.result();
      o.put("id", i.id()).put("output", i.output()).put("is-error", i.isError());
    } else if (event instanceof Event.Retry r) {
      o.put("attempt", r.retry().attempt()).put("reason", r.retry().reason());
    } else if (event instanceof Event.UsageReport u) {
      Usage x = u.usage();
      o.set("input", u64(x.input()));
      o.set("output", u64(x.output()));
      o.set("cache-read", u64(x.cacheRead()));
      o.set("cache-creation", u64(x.cacheCreation()));
      o.set("thinking", u64(x.thinking()));
    } else if (event instanceof Event.TurnEnd t) {
      o.put("value", t.result());
    } else if (event instanceof Event.TurnFailed f) {
      o.put("kind", f.failure().kind().witName()).put("message", f.failure().message());
    } else if (event instanceof Event.Note n) {
      o.put("value", n.text());
    } else if (event instanceof Event.ToolCallStarted s) {
      o.put("id", s.start().id()).put("name", s.start().name());
    } else if (event instanceof Event.ToolCallProgressed p) {
      o.put("id", p.progress().id());
      o.set("input-bytes", u64(p.progress().inputBytes()));
    } else if (event instanceof Event.Quota q) {
      ArrayNode windows = o.putArray("windows");
      for (QuotaWindow w : q.windows()) {
        ObjectNode wo = windows.addObject().put("name", w.name());
        wo.set("used", w.used().map(EventJson::f64).orElse(NODES.nullNode()));
        wo.set("resets-at", u64(w.resetsAt()));
        wo.set("window-minutes", u64(w.windowMinutes()));
        wo.put("state", w.state().map(QuotaState::witName).orElse(null));
      }
    } else if (event instanceof Event.SuggestedPrompt s) {
      o.put("value", s.prompt());
    }
    return o;
  }

  /** Reads one canonical event object. */
  public static Event fromJson(JsonNode node) {
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("an event must be a JSON object, not " + node);
    }
    EventFields f = new EventFields(node, EventFields.text(node.get("type"), "event", "type"));
    Event e =
        switch (f.type) {
          case "session-started" ->
              new Event.SessionStarted(
                  new SessionInfo(f.text("id"), f.text("auth"), f.option("model", f::textNode)));
          case "text-delta" -> new Event.TextDelta(f.text("value"));
          case "text" -> new Event.Text(f.text("value"));
          case "thinking-delta" -> new Event.ThinkingDelta(f.text("value"));
          case "thinking" -> new Event.Thinking(f.text("value"));
          case "tool-call" ->
              new Event.ToolCall(new ToolCallInfo(f.text("id"), f.text("name"), f.text("input")));
          case "tool-result" ->
              new Event.ToolResult(
                  new ToolResultInfo(f.text("id"), f.text("output"), f.bool("is-error")));
          case "retry" -> new Event.Retry(new RetryInfo(f.u32("attempt"), f.text("reason")));
          case "usage" ->
              new Event.UsageReport(
                  new Usage(
                      f.option("input", f::u64Node),
                      f.option("output", f::u64Node),
                      f.option("cache-read", f::u64Node),
                      f.option("cache-creation", f::u64Node),
                      f.option("thinking", f::u64Node)));
          case "turn-end" -> new Event.TurnEnd(f.text("value"));
          case "turn-failed" ->
              new Event.TurnFailed(
                  new TurnFailure(
                      f.named("kind", FailureKind.values(), FailureKind::witName),
                      f.text("message")));
          case "note" -> new Event.Note(f.text("value"));
          case "tool-call-started" ->
              new Event.ToolCallStarted(new ToolCallStart(f.text("id"), f.text("name")));
          case "tool-call-progress" ->
              new Event.ToolCallProgressed(
                  new ToolCallProgress(f.text("id"), f.u64("input-bytes")));
          case "quota" -> new Event.Quota(f.windows());
          case "suggested-prompt" -> new Event.SuggestedPrompt(f.text("value"));
          default -> throw new IllegalArgumentException("unknown event type \"" + f.type + "\"");
        };
    f.noOthers();
    return e;
  }

  /** The events as a JSON array. */
  public static ArrayNode toJson(List<Event> events) {
    ArrayNode array = NODES.arrayNode();
    events.forEach(e -> array.add(toJson(e)));
    return array;
  }

  /** Reads a JSON array of canonical event objects. */
  public static List<Event> fromJsonArray(JsonNode array) {
    if (array == null || !array.isArray()) {
      throw new IllegalArgumentException("events must be a JSON array, not " + array);
    }
    List<Event> events = new ArrayList<>(array.size());
    for (int i = 0; i < array.size(); i++) {
      try {
        events.add(fromJson(array.get(i)));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("event " + i + ": " + e.getMessage(), e);
      }
    }
    return List.copyOf(events);
  }

  /**
   * The events as a JSON array with one compact event per line ({@code [\n {…},\n {…}\n]\n}; {@code
   * []\n} when empty), the layout of the golden files, so a diff shows which event changed.
   */
  public static String toPrettyLines(List<Event> events) {
    if (events.isEmpty()) {
      return "[]\n";
    }
    StringBuilder out = new StringBuilder("[\n");
    for (int i = 0; i < events.size(); i++) {
      out.append("  ").append(compact(toJson(events.get(i))));
      out.append(i + 1 < events.size() ? ",\n" : "\n");
    }
    return out.append("]\n").toString();
  }

  /** Reads a JSON array of events from text (e.g. a golden file). */
  public static List<Event> parseArray(String json) {
    try {
      return fromJsonArray(MAPPER.readTree(json));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
    }
  }

  /** One event as compact JSON text. */
  public static String compact(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serializes", e);
    }
  }

  private static JsonNode u64(Optional<Long> v) {
    return v.map(EventJson::u64).orElse(NODES.nullNode());
  }

  private static JsonNode u64(long v) {
    return v >= 0
        ? NODES.numberNode(v)
        : NODES.numberNode(new BigInteger(Long.toUnsignedString(v)));
  }

  private static JsonNode f64(double d) {
    if (Double.isFinite(d)) {
      return NODES.numberNode(d);
    }
    return NODES.textNode(Double.isNaN(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
  }
}
