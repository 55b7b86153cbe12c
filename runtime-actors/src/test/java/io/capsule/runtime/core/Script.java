package io.capsule.runtime.core;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.QuotaWindow;
import io.capsule.driver.api.RetryInfo;
import io.capsule.driver.api.SessionInfo;
import io.capsule.driver.api.ToolCallInfo;
import io.capsule.driver.api.ToolCallProgress;
import io.capsule.driver.api.ToolCallStart;
import io.capsule.driver.api.ToolResultInfo;
import io.capsule.driver.api.TurnFailure;
import io.capsule.driver.api.Usage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A compact notation for event tables: events separated by {@code ;}, each {@code name:args}.
 * {@code text:hi}, {@code delta:h}, {@code think:x}, {@code call:id:name}, {@code start:id:name},
 * {@code prog:id:bytes}, {@code result:id}, {@code usage:in=1,out=2,cr=3,cc=4,th=5} (missing =
 * none), {@code end:result}, {@code fail:kind}, {@code note:x}, {@code quota:name:used}, {@code
 * prompt:x}, {@code session:id:auth}, {@code retry:n}.
 */
final class Script {

  private Script() {}

  static List<Event> parse(String script) {
    List<Event> out = new ArrayList<>();
    if (script.isBlank()) {
      return out;
    }
    for (String item : script.split(";")) {
      out.add(event(item.trim()));
    }
    return out;
  }

  static Event event(String item) {
    String[] p = item.split(":", -1);
    return switch (p[0]) {
      case "text" -> new Event.Text(p[1]);
      case "delta" -> new Event.TextDelta(p[1]);
      case "think" -> new Event.ThinkingDelta(p[1]);
      case "call" -> new Event.ToolCall(new ToolCallInfo(p[1], p[2], "{}"));
      case "start" -> new Event.ToolCallStarted(new ToolCallStart(p[1], p[2]));
      case "prog" -> new Event.ToolCallProgressed(new ToolCallProgress(p[1], Long.parseLong(p[2])));
      case "result" -> new Event.ToolResult(new ToolResultInfo(p[1], "out", false));
      case "usage" -> new Event.UsageReport(usage(p[1]));
      case "end" -> new Event.TurnEnd(p[1]);
      case "fail" ->
          new Event.TurnFailed(
              new TurnFailure(
                  FailureKind.valueOf(p[1].toUpperCase(Locale.ROOT).replace('-', '_')), "boom"));
      case "note" -> new Event.Note(p[1]);
      case "quota" ->
          new Event.Quota(
              List.of(
                  new QuotaWindow(
                      p[1],
                      Optional.of(Double.parseDouble(p[2])),
                      Optional.empty(),
                      Optional.empty(),
                      Optional.empty())));
      case "prompt" -> new Event.SuggestedPrompt(p[1]);
      case "session" -> new Event.SessionStarted(new SessionInfo(p[1], p[2], Optional.empty()));
      case "retry" -> new Event.Retry(new RetryInfo(Long.parseLong(p[1]), "r"));
      default -> throw new IllegalArgumentException("unknown script item " + item);
    };
  }

  /** {@code in=1,out=2,cr=3,cc=4,th=5}; a missing member is none. */
  static Usage usage(String spec) {
    Optional<Long> in = Optional.empty();
    Optional<Long> out = Optional.empty();
    Optional<Long> cr = Optional.empty();
    Optional<Long> cc = Optional.empty();
    Optional<Long> th = Optional.empty();
    if (!spec.isBlank() && !spec.equals("none")) {
      for (String kv : spec.split(",")) {
        String[] m = kv.split("=");
        Optional<Long> v = Optional.of(Long.parseLong(m[1]));
        switch (m[0]) {
          case "in" -> in = v;
          case "out" -> out = v;
          case "cr" -> cr = v;
          case "cc" -> cc = v;
          case "th" -> th = v;
          default -> throw new IllegalArgumentException(kv);
        }
      }
    }
    return new Usage(in, out, cr, cc, th);
  }

  /** The same notation back, for comparing usage in tables ({@code none} when empty). */
  static String render(Usage u) {
    List<String> parts = new ArrayList<>();
    u.input().ifPresent(v -> parts.add("in=" + v));
    u.output().ifPresent(v -> parts.add("out=" + v));
    u.cacheRead().ifPresent(v -> parts.add("cr=" + v));
    u.cacheCreation().ifPresent(v -> parts.add("cc=" + v));
    u.thinking().ifPresent(v -> parts.add("th=" + v));
    return parts.isEmpty() ? "none" : String.join(",", parts);
  }
}
