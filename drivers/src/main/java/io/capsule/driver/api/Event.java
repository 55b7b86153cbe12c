package io.capsule.driver.api;

import java.util.List;
import java.util.Objects;

/** WIT {@code event}: one thing the harness did, read out of its output. */
public sealed interface Event {

  /** The WIT case name, e.g. {@code text-delta}. */
  String witName();

  /** {@code turn-end} and {@code turn-failed} end a turn. */
  default boolean isTerminal() {
    return false;
  }

  /** Events still taken after the terminal one: quota, suggested-prompt and note. */
  default boolean allowedAfterTerminal() {
    return false;
  }

  record SessionStarted(SessionInfo info) implements Event {
    public SessionStarted {
      Objects.requireNonNull(info, "info");
    }

    @Override
    public String witName() {
      return "session-started";
    }
  }

  record TextDelta(String text) implements Event {
    public TextDelta {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public String witName() {
      return "text-delta";
    }
  }

  record Text(String text) implements Event {
    public Text {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public String witName() {
      return "text";
    }
  }

  record ThinkingDelta(String text) implements Event {
    public ThinkingDelta {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public String witName() {
      return "thinking-delta";
    }
  }

  record Thinking(String text) implements Event {
    public Thinking {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public String witName() {
      return "thinking";
    }
  }

  record ToolCall(ToolCallInfo call) implements Event {
    public ToolCall {
      Objects.requireNonNull(call, "call");
    }

    @Override
    public String witName() {
      return "tool-call";
    }
  }

  record ToolResult(ToolResultInfo result) implements Event {
    public ToolResult {
      Objects.requireNonNull(result, "result");
    }

    @Override
    public String witName() {
      return "tool-result";
    }
  }

  record Retry(RetryInfo retry) implements Event {
    public Retry {
      Objects.requireNonNull(retry, "retry");
    }

    @Override
    public String witName() {
      return "retry";
    }
  }

  /** WIT {@code usage(usage)}: cumulative counts so far. */
  record UsageReport(Usage usage) implements Event {
    public UsageReport {
      Objects.requireNonNull(usage, "usage");
    }

    @Override
    public String witName() {
      return "usage";
    }
  }

  record TurnEnd(String result) implements Event {
    public TurnEnd {
      Objects.requireNonNull(result, "result");
    }

    @Override
    public String witName() {
      return "turn-end";
    }

    @Override
    public boolean isTerminal() {
      return true;
    }
  }

  record TurnFailed(TurnFailure failure) implements Event {
    public TurnFailed {
      Objects.requireNonNull(failure, "failure");
    }

    @Override
    public String witName() {
      return "turn-failed";
    }

    @Override
    public boolean isTerminal() {
      return true;
    }
  }

  record Note(String text) implements Event {
    public Note {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public String witName() {
      return "note";
    }

    @Override
    public boolean allowedAfterTerminal() {
      return true;
    }
  }

  record ToolCallStarted(ToolCallStart start) implements Event {
    public ToolCallStarted {
      Objects.requireNonNull(start, "start");
    }

    @Override
    public String witName() {
      return "tool-call-started";
    }
  }

  record ToolCallProgressed(ToolCallProgress progress) implements Event {
    public ToolCallProgressed {
      Objects.requireNonNull(progress, "progress");
    }

    @Override
    public String witName() {
      return "tool-call-progress";
    }
  }

  record Quota(List<QuotaWindow> windows) implements Event {
    public Quota {
      windows = List.copyOf(windows);
    }

    @Override
    public String witName() {
      return "quota";
    }

    @Override
    public boolean allowedAfterTerminal() {
      return true;
    }
  }

  record SuggestedPrompt(String prompt) implements Event {
    public SuggestedPrompt {
      Objects.requireNonNull(prompt, "prompt");
    }

    @Override
    public String witName() {
      return "suggested-prompt";
    }

    @Override
    public boolean allowedAfterTerminal() {
      return true;
    }
  }
}
