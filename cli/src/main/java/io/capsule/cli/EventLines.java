package io.capsule.cli;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.QuotaWindow;
import io.capsule.driver.api.Usage;
import java.util.Optional;
import java.util.stream.Collectors;

/** One compact human line per driver event, for {@code capsule driver replay}. */
final class EventLines {
  private static final int PREVIEW = 120;

  private EventLines() {}

  static String human(Event e) {
    String body;
    if (e instanceof Event.SessionStarted s) {
      body = "id=" + s.info().id() + " auth=" + s.info().auth() + opt(" model=", s.info().model());
    } else if (e instanceof Event.TextDelta t) {
      body = quote(t.text());
    } else if (e instanceof Event.Text t) {
      body = quote(t.text());
    } else if (e instanceof Event.ThinkingDelta t) {
      body = quote(t.text());
    } else if (e instanceof Event.Thinking t) {
      body = quote(t.text());
    } else if (e instanceof Event.ToolCall c) {
      body = c.call().name() + " id=" + c.call().id() + " input=" + preview(c.call().input());
    } else if (e instanceof Event.ToolResult r) {
      body =
          "id="
              + r.result().id()
              + (r.result().isError() ? " ERROR " : " ")
              + quote(r.result().output());
    } else if (e instanceof Event.Retry r) {
      body = "attempt " + r.retry().attempt() + ": " + preview(r.retry().reason());
    } else if (e instanceof Event.UsageReport u) {
      body = usage(u.usage());
    } else if (e instanceof Event.TurnEnd t) {
      body = quote(t.result());
    } else if (e instanceof Event.TurnFailed f) {
      body = f.failure().kind().witName() + ": " + preview(f.failure().message());
    } else if (e instanceof Event.Note n) {
      body = preview(n.text());
    } else if (e instanceof Event.ToolCallStarted s) {
      body = s.start().name() + " id=" + s.start().id();
    } else if (e instanceof Event.ToolCallProgressed p) {
      body = "id=" + p.progress().id() + " bytes=" + p.progress().inputBytes();
    } else if (e instanceof Event.Quota q) {
      body = q.windows().stream().map(EventLines::window).collect(Collectors.joining(", "));
    } else if (e instanceof Event.SuggestedPrompt p) {
      body = quote(p.prompt());
    } else {
      body = e.toString();
    }
    return String.format("%-18s %s", e.witName(), body);
  }

  static String usage(Usage u) {
    return "input="
        + count(u.input())
        + " output="
        + count(u.output())
        + " cache-read="
        + count(u.cacheRead())
        + " cache-creation="
        + count(u.cacheCreation())
        + " thinking="
        + count(u.thinking());
  }

  /** {@code none} stays visibly different from 0. */
  private static String count(Optional<Long> n) {
    return n.map(Long::toUnsignedString).orElse("none");
  }

  private static String window(QuotaWindow w) {
    return w.name()
        + w.used().map(u -> String.format(" %.0f%%", u * 100)).orElse("")
        + w.state().map(s -> " " + s.witName()).orElse("");
  }

  private static String opt(String label, Optional<String> v) {
    return v.map(x -> label + x).orElse("");
  }

  private static String quote(String s) {
    return '"' + preview(s).replace("\n", "\\n") + '"';
  }

  private static String preview(String s) {
    String one = s.replace("\n", "\\n");
    return one.length() <= PREVIEW ? one : one.substring(0, PREVIEW) + "…";
  }
}
