package io.capsule.driver.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;

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
    MAPPER.getFactory().setCharacterEscapes(new RustEscapes());
  }

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final BigInteger U64_LIMIT = BigInteger.ONE.shiftLeft(64);

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
    Fields f = new Fields(node, text(node.get("type"), "event", "type"));
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

  private static String text(JsonNode v, String type, String field) {
    if (v == null || !v.isTextual()) {
      throw new IllegalArgumentException(where(type, field) + " must be a string, not " + v);
    }
    return v.textValue();
  }

  private static String where(String type, String field) {
    return type + "." + field;
  }

  /** The fields of one event object, read once each; {@link #noOthers} refuses the rest. */
  private static final class Fields {
    private final JsonNode node;
    private final String type;
    private final Set<String> read = new HashSet<>(Set.of("type"));

    Fields(JsonNode node, String type) {
      this.node = node;
      this.type = type;
    }

    private JsonNode required(String name) {
      read.add(name);
      JsonNode v = node.get(name);
      if (v == null) {
        throw new IllegalArgumentException(where(type, name) + " is missing");
      }
      return v;
    }

    String text(String name) {
      return EventJson.text(required(name), type, name);
    }

    String textNode(JsonNode v, String name) {
      return EventJson.text(v, type, name);
    }

    boolean bool(String name) {
      JsonNode v = required(name);
      if (!v.isBoolean()) {
        throw new IllegalArgumentException(where(type, name) + " must be true or false, not " + v);
      }
      return v.booleanValue();
    }

    long u64(String name) {
      return u64Node(required(name), name);
    }

    Long u64Node(JsonNode v, String name) {
      if (!v.isIntegralNumber()
          || v.bigIntegerValue().signum() < 0
          || v.bigIntegerValue().compareTo(U64_LIMIT) >= 0) {
        throw new IllegalArgumentException(
            where(type, name) + " must be an integer from 0 to 2^64-1, not " + v);
      }
      return v.bigIntegerValue().longValue();
    }

    long u32(String name) {
      JsonNode v = required(name);
      if (!v.isIntegralNumber()
          || !v.canConvertToLong()
          || v.longValue() < 0
          || v.longValue() > 0xffff_ffffL) {
        throw new IllegalArgumentException(
            where(type, name) + " must be an integer from 0 to 2^32-1, not " + v);
      }
      return v.longValue();
    }

    Double f64Node(JsonNode v, String name) {
      if (v.isNumber()) {
        return v.doubleValue();
      }
      if (v.isTextual()) {
        switch (v.textValue()) {
          case "NaN":
            return Double.NaN;
          case "Infinity":
            return Double.POSITIVE_INFINITY;
          case "-Infinity":
            return Double.NEGATIVE_INFINITY;
          default:
            break;
        }
      }
      throw new IllegalArgumentException(where(type, name) + " must be a number, not " + v);
    }

    <T> Optional<T> option(String name, BiFunction<JsonNode, String, T> some) {
      JsonNode v = required(name);
      return v.isNull() ? Optional.empty() : Optional.of(some.apply(v, name));
    }

    <E> E named(String name, E[] values, Function<E, String> witName) {
      String s = text(name);
      return Arrays.stream(values)
          .filter(v -> witName.apply(v).equals(s))
          .findFirst()
          .orElseThrow(
              () -> new IllegalArgumentException(where(type, name) + " has no case \"" + s + "\""));
    }

    List<QuotaWindow> windows() {
      JsonNode array = required("windows");
      if (!array.isArray()) {
        throw new IllegalArgumentException(where(type, "windows") + " must be an array");
      }
      List<QuotaWindow> windows = new ArrayList<>();
      for (JsonNode w : array) {
        if (!w.isObject()) {
          throw new IllegalArgumentException(where(type, "windows") + " holds a non-object " + w);
        }
        Fields f = new Fields(w, type + ".windows[" + windows.size() + "]");
        f.read.remove("type");
        windows.add(
            new QuotaWindow(
                f.text("name"),
                f.option("used", f::f64Node),
                f.option("resets-at", f::u64Node),
                f.option("window-minutes", f::u64Node),
                f.option(
                    "state",
                    (v, n) ->
                        Arrays.stream(QuotaState.values())
                            .filter(s -> s.witName().equals(v.asText()) && v.isTextual())
                            .findFirst()
                            .orElseThrow(
                                () ->
                                    new IllegalArgumentException(
                                        where(f.type, n) + " has no case " + v)))));
        f.noOthers();
      }
      return windows;
    }

    void noOthers() {
      Iterator<String> names = node.fieldNames();
      while (names.hasNext()) {
        String name = names.next();
        if (!read.contains(name)) {
          throw new IllegalArgumentException(where(type, name) + " is not a field of this event");
        }
      }
    }
  }

  /**
   * Escapes exactly as serde_json does, so a text holding a control character (a terminal's ESC,
   * say) is written byte for byte as the Rust drivers write it: the short forms for backspace, tab,
   * newline, form feed and carriage return; every other control character as a unicode escape with
   * four <b>lowercase</b> hex digits (Jackson's default is uppercase); nothing else escaped.
   */
  private static final class RustEscapes extends CharacterEscapes {
    private static final long serialVersionUID = 1L;
    private final int[] codes = CharacterEscapes.standardAsciiEscapesForJSON();

    RustEscapes() {
      for (int c = 0; c < 0x20; c++) {
        if (codes[c] == CharacterEscapes.ESCAPE_STANDARD) {
          codes[c] = CharacterEscapes.ESCAPE_CUSTOM;
        }
      }
    }

    @Override
    public int[] getEscapeCodesForAscii() {
      return codes;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      // Asked for every non-ASCII character too: those are written as they are.
      return ch < 0x20 ? new SerializedString(String.format("\\u%04x", ch)) : null;
    }
  }
}
