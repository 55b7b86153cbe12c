package io.capsule.cli;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a person sees during {@code capsule run}: a status line while the harness starts, streamed
 * text as it arrives, tool calls and results as compact lines, retries, quota and warnings, and at
 * the end the result, the turns, the token usage split and the duration. Colours only when {@code
 * color} is set (a TTY without {@code NO_COLOR}).
 *
 * <p>Threading: called from one stream thread at a time; not thread-safe.
 */
final class LiveRenderer {
  private static final int TOOL_PREVIEW = 100;

  /**
   * Unreadable harness lines shown in the live view: enough to see what the harness printed, few
   * enough that a harness printing garbage in a loop does not bury the answer. Every line is in the
   * trace ({@code --trace-dir}).
   */
  static final int UNREADABLE_SHOWN = 3;

  /** How the drivers name a harness line they cannot read ({@code unreadable jsonl line: …}). */
  private static final java.util.regex.Pattern UNREADABLE =
      java.util.regex.Pattern.compile("^unreadable \\S+ line: ");

  private static final String NOT_REPORTED = "not reported by the harness";

  private final PrintWriter out;
  private final boolean color;
  private boolean midLine;

  /** The message streamed so far (deltas); empty between messages. */
  private String streamed = "";

  /** The last message shown whole, so the summary does not print the same result twice. */
  private String lastMessage = "";

  /** Whether any usage arrived; without it the outcome's zeros mean "not reported", not free. */
  private boolean usageReported;

  /** Where the trace goes ({@code --trace-dir}), or empty when the run keeps none. */
  private final java.util.Optional<String> traceDir;

  private int unreadable;

  LiveRenderer(PrintWriter out, boolean color) {
    this(out, color, java.util.Optional.empty());
  }

  LiveRenderer(PrintWriter out, boolean color, java.util.Optional<String> traceDir) {
    this.out = out;
    this.color = color;
    this.traceDir = traceDir;
  }

  void header(String capsule, String taskId) {
    dim("capsule " + capsule + " · task " + taskId);
  }

  void on(RunEvent event) {
    if (event instanceof RunEvent.StateChanged s) {
      switch (s.phase()) {
        case STARTING -> dim("starting the harness…");
        case RUNNING -> dim("running");
        case INTERRUPTING -> warn("interrupting the turn (canceled)");
        default -> {}
      }
    } else if (event instanceof RunEvent.SessionStarted s) {
      dim("session " + s.sessionId() + s.model().map(m -> " · model " + m).orElse(""));
    } else if (event instanceof RunEvent.TextDelta t) {
      text(t.delta());
      streamed = t.soFar();
      lastMessage = streamed;
    } else if (event instanceof RunEvent.TextCompleted t) {
      lastMessage = t.text();
      if (streamed.isEmpty()) {
        text(t.text());
      } else if (!streamed.equals(t.text())) {
        endLine();
        dim("(the final text replaces what was streamed:)");
        text(t.text());
      }
      endLine();
      streamed = "";
    } else if (event instanceof RunEvent.ThinkingCompleted t) {
      dim("thinking: " + preview(t.text()));
    } else if (event instanceof RunEvent.ToolCalled c) {
      line(paint("36", "⚙ " + c.name()) + " " + preview(c.input()));
    } else if (event instanceof RunEvent.ToolResulted r) {
      line((r.isError() ? paint("31", "  ↳ error: ") : paint("36", "  ↳ ")) + preview(r.output()));
    } else if (event instanceof RunEvent.Retry r) {
      warn("retry " + r.attempt() + ": " + preview(r.reason()));
    } else if (event instanceof RunEvent.QuotaUpdated q) {
      for (RunEvent.Window w : q.windows()) {
        if (w.state().filter(s -> !"ok".equals(s)).isPresent()) {
          warn(
              "quota "
                  + w.name()
                  + w.used()
                      .map(u -> String.format(Locale.ROOT, " %.0f%% used", u * 100))
                      .orElse("")
                  + " ("
                  + w.state().get()
                  + ")");
        }
      }
    } else if (event instanceof RunEvent.Warning w) {
      warn(w.code() + " " + w.message());
      Hints.under(w.code()).forEach(this::line);
    } else if (event instanceof RunEvent.Note n && UNREADABLE.matcher(n.text()).find()) {
      unreadable(n.text());
    } else if (event instanceof RunEvent.UsageUpdated) {
      usageReported = true;
    } else if (event instanceof RunEvent.Finished f) {
      summary(f.outcome());
    }
    out.flush();
  }

  private void summary(RunOutcome o) {
    endLine();
    line(paint("2", "─".repeat(40)));
    String seconds = String.format(Locale.ROOT, "%.1f s", o.duration().toMillis() / 1000.0);
    String turns = o.turns() + (o.turns() == 1 ? " turn" : " turns");
    if (o.status() == RunStatus.DONE) {
      line(paint("32", "✓ done") + " in " + seconds + " · " + turns);
    } else {
      String what = o.canceled() ? "✗ canceled" : "✗ " + o.status().wire();
      line(paint("31", what) + " in " + seconds + " · " + turns + " · " + codeOf(o));
      line("  " + o.message());
      Hints.under(codeOf(o)).forEach(this::line);
    }
    if (unreadable > UNREADABLE_SHOWN) {
      warn(unreadable + " harness lines could not be read in all (" + UNREADABLE_SHOWN + " shown)");
    }
    line("tokens: " + (usageReported ? usage(o.usage(), o.unreported()) : NOT_REPORTED));
    o.result()
        .filter(r -> !r.isBlank() && !r.strip().equals(lastMessage.strip()))
        .ifPresent(r -> line("result: " + r));
    out.flush();
  }

  private static String codeOf(RunOutcome o) {
    return o.failureType().or(o::code).orElse("");
  }

  /**
   * The split's members with their counts, then the ones the driver never reported by name: those
   * read 0 on the wire, but "not reported" is never shown as 0 (docs/run-semantics.md §7).
   */
  static String usage(UsageSplit u, Set<String> unreported) {
    Map<String, Long> members = new LinkedHashMap<>();
    members.put("fresh_input", u.freshInput());
    members.put("cache_read", u.cacheRead());
    members.put("cache_write", u.cacheWrite());
    members.put("output", u.output());
    members.put("thinking", u.thinking());
    List<String> counted = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    members.forEach(
        (member, n) -> {
          String words = member.replace('_', ' ');
          if (unreported.contains(member)) {
            missing.add(words);
          } else {
            counted.add(words + " " + n);
          }
        });
    if (counted.isEmpty()) {
      return NOT_REPORTED;
    }
    return String.join(", ", counted)
        + (missing.isEmpty() ? "" : " · not reported: " + String.join(", ", missing));
  }

  /** The first few unreadable lines, each once, and once where to find every one. */
  private void unreadable(String note) {
    unreadable++;
    if (unreadable > UNREADABLE_SHOWN) {
      return;
    }
    warn(
        "the harness printed a line its driver cannot read: "
            + preview(note.substring(note.indexOf(": ") + 2)));
    if (unreadable == 1) {
      dim(
          traceDir
              .map(d -> "every harness line is kept in the run's trace.jsonl under " + d)
              .orElse(
                  "to see every line the harness printed, run again with --trace-dir DIR"
                      + " (DIR/run-…/trace.jsonl)"));
    }
  }

  private void text(String s) {
    out.print(s);
    midLine = !s.endsWith("\n");
  }

  private void dim(String s) {
    line(paint("2", "· " + s));
  }

  private void warn(String s) {
    line(paint("33", "! " + s));
  }

  private void line(String s) {
    endLine();
    out.println(s);
  }

  private void endLine() {
    if (midLine) {
      out.println();
      midLine = false;
    }
  }

  private String paint(String sgr, String s) {
    return color ? "\u001b[" + sgr + "m" + s + "\u001b[0m" : s;
  }

  private static String preview(String s) {
    String one = s.replace("\n", " ").strip();
    return one.length() <= TOOL_PREVIEW ? one : one.substring(0, TOOL_PREVIEW) + "…";
  }
}
