package io.capsule.runtime.core;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.QuotaWindow;
import io.capsule.driver.api.Usage;
import io.capsule.runtime.javadsl.RunEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The pure core of a run's bookkeeping (docs/run-semantics.md §6–§7): applies the driver's events
 * in order and decides turns, usage growth, ceilings, the terminal rule and the post-terminal
 * filter. It never does I/O; the run actor forwards {@link LedgerStep#progress()} and writes {@link
 * LedgerStep#trace()}.
 *
 * <p>Once an ending is decided (terminal event, max turns, spend ceiling, or {@link #stop}), only
 * {@code quota}, {@code suggested-prompt} and {@code note} are applied; everything else is noted in
 * the trace as ignored — for the rest of the batch and every later batch.
 *
 * <p>Usage that arrives while no turn is open is carried to the next turn that opens (it is in the
 * run's total at once either way). The spend ceiling is checked when a turn closes at a {@code
 * tool-result}; a turn closing at a terminal event ends the run anyway, with that event's outcome.
 *
 * <p>Not thread-safe: one ledger per run, used by the run actor only.
 */
public final class TurnLedger {

  private final String taskId;
  private final OptionalLong maxTurns;
  private final OptionalLong maxSessionTokens;
  private final boolean resumed;

  private final UsageMeter meter = new UsageMeter();
  private final ToolCalls tools = new ToolCalls();
  private final QuotaBook quota = new QuotaBook();
  private final MessageBuffer text = new MessageBuffer();
  private final MessageBuffer thinking = new MessageBuffer();

  private int turns;
  private boolean turnOpen;
  private boolean turnCalledTool;
  private Optional<String> turnFirstTool = Optional.empty();
  private Usage turnGrowth = Usage.NONE;
  private Usage pendingGrowth = Usage.NONE;
  private Optional<String> sessionId = Optional.empty();
  private boolean sawSession;
  private Optional<Ending> ending = Optional.empty();

  // Per-step output, reset by apply().
  private List<RunEvent> progress = new ArrayList<>();
  private List<TraceRecord> trace = new ArrayList<>();
  private Optional<Ending> decided = Optional.empty();

  /**
   * @param maxTurns {@code inference.max_turns} (after any budget narrowing), when set
   * @param maxSessionTokens {@code inference.max_session_tokens}, when set
   * @param resumed whether the run resumes a harness session (for E-RUN-036)
   */
  public TurnLedger(
      String taskId, OptionalLong maxTurns, OptionalLong maxSessionTokens, boolean resumed) {
    this.taskId = taskId;
    this.maxTurns = maxTurns;
    this.maxSessionTokens = maxSessionTokens;
    this.resumed = resumed;
  }

  /** Applies one batch of events, in order. */
  public LedgerStep apply(List<Event> batch, Instant now) {
    progress = new ArrayList<>();
    trace = new ArrayList<>();
    decided = Optional.empty();
    for (Event e : batch) {
      if (ending.isPresent() && !e.allowedAfterTerminal()) {
        trace.add(
            TraceRecord.of("harness_note")
                .with("note", "event after the end ignored")
                .with("ignored", e.witName()));
        continue;
      }
      applyOne(e, now);
    }
    return new LedgerStep(progress, trace, decided);
  }

  /**
   * A runtime ending decided outside the events (inactivity, driver failure): from now on the
   * ledger filters like after a terminal event. Does nothing when an ending is already decided.
   */
  public void stop(Ending runtimeEnding) {
    if (ending.isEmpty()) {
      ending = Optional.of(runtimeEnding);
    }
  }

  /** Trace notes for the end of the run: every call that never got a result. */
  public List<TraceRecord> finish() {
    List<TraceRecord> notes = new ArrayList<>();
    for (String id : tools.unanswered()) {
      notes.add(
          TraceRecord.of("harness_note").with("note", "tool call with no result").with("id", id));
    }
    return notes;
  }

  public Optional<Ending> ending() {
    return ending;
  }

  public int turns() {
    return turns;
  }

  /** Per member, everything attributed so far (none where never reported). */
  public Usage usage() {
    return meter.total();
  }

  /** The session id the harness reported, when it reported a non-empty one. */
  public Optional<String> reportedSessionId() {
    return sessionId;
  }

  public List<QuotaWindow> quotaWindows() {
    return quota.windows();
  }

  private void applyOne(Event e, Instant now) {
    if (e instanceof Event.SessionStarted s) {
      onSession(s);
    } else if (e instanceof Event.TextDelta d) {
      progress.add(new RunEvent.TextDelta(taskId, d.text(), text.append(d.text())));
    } else if (e instanceof Event.Text t) {
      if (openTurnIfNeeded()) {
        progress.add(new RunEvent.TextCompleted(taskId, text.complete(t.text())));
      }
    } else if (e instanceof Event.ThinkingDelta d) {
      progress.add(new RunEvent.ThinkingDelta(taskId, d.text(), thinking.append(d.text())));
    } else if (e instanceof Event.Thinking t) {
      progress.add(new RunEvent.ThinkingCompleted(taskId, thinking.complete(t.text())));
    } else if (e instanceof Event.ToolCallStarted s) {
      tools.started(s.start().id(), s.start().name(), now);
      progress.add(new RunEvent.ToolStarted(taskId, s.start().id(), s.start().name()));
    } else if (e instanceof Event.ToolCallProgressed p) {
      if (tools.progress(p.progress().id(), p.progress().inputBytes())) {
        progress.add(
            new RunEvent.ToolProgress(taskId, p.progress().id(), p.progress().inputBytes()));
      }
    } else if (e instanceof Event.ToolCall c) {
      onToolCall(c, now);
    } else if (e instanceof Event.ToolResult r) {
      onToolResult(r, now);
    } else if (e instanceof Event.Retry r) {
      trace.add(
          TraceRecord.of("harness_retry")
              .with("attempt", r.retry().attempt())
              .with("reason", r.retry().reason()));
      progress.add(new RunEvent.Retry(taskId, r.retry().attempt(), r.retry().reason()));
    } else if (e instanceof Event.UsageReport u) {
      onUsage(u.usage());
    } else if (e instanceof Event.TurnEnd t) {
      onTurnEnd(t);
    } else if (e instanceof Event.TurnFailed f) {
      onTurnFailed(f);
    } else if (e instanceof Event.Note n) {
      trace.add(TraceRecord.of("harness_note").with("note", n.text()));
      progress.add(new RunEvent.Note(taskId, n.text()));
    } else if (e instanceof Event.Quota q) {
      onQuota(q);
    } else if (e instanceof Event.SuggestedPrompt p) {
      trace.add(TraceRecord.of("suggested_prompt").with("prompt", p.prompt()));
      progress.add(new RunEvent.SuggestedPrompt(taskId, p.prompt()));
    }
  }

  private void onSession(Event.SessionStarted s) {
    sawSession = true;
    if (!s.info().id().isEmpty()) {
      sessionId = Optional.of(s.info().id());
    }
    trace.add(
        TraceRecord.of("harness_session")
            .with("session_id", s.info().id())
            .with("auth", s.info().auth())
            .with("model", s.info().model().orElse(null)));
    progress.add(
        new RunEvent.SessionStarted(taskId, s.info().id(), s.info().auth(), s.info().model()));
    if (!"subscription".equals(s.info().auth())) {
      String message = "the harness reports " + s.info().auth() + " billing, not subscription";
      trace.add(
          TraceRecord.of("harness_warning")
              .with("code", Code.W_SEC_031.id())
              .with("message", message));
      progress.add(new RunEvent.Warning(taskId, Code.W_SEC_031.id(), message));
    }
  }

  private void onToolCall(Event.ToolCall c, Instant now) {
    if (!openTurnIfNeeded()) {
      return;
    }
    tools.called(c.call().id(), c.call().name(), c.call().input(), turns, now);
    if (!turnCalledTool) {
      turnFirstTool = Optional.of(c.call().name());
    }
    turnCalledTool = true;
    progress.add(
        new RunEvent.ToolCalled(taskId, c.call().id(), c.call().name(), c.call().input(), turns));
  }

  private void onToolResult(Event.ToolResult r, Instant now) {
    var finished = tools.result(r.result().id(), r.result().output(), r.result().isError(), now);
    if (finished.isEmpty()) {
      trace.add(
          TraceRecord.of("harness_note")
              .with("note", "tool result with no call")
              .with("id", r.result().id()));
    } else {
      ToolCalls.Finished f = finished.get();
      trace.add(
          TraceRecord.of("tool_call")
              .with("turn", f.turn())
              .with("name", f.name())
              .with("id", f.id())
              .with("input_bytes", f.inputBytes())
              .with("output_bytes", f.outputBytes())
              .with("duration_ms", f.duration().toMillis())
              .with("status", f.isError() ? "error" : "ok"));
    }
    progress.add(
        new RunEvent.ToolResulted(
            taskId, r.result().id(), r.result().output(), r.result().isError()));
    if (turnOpen) {
      closeTurn();
      checkSpendCeiling();
    }
  }

  private void onUsage(Usage cumulative) {
    Usage growth = meter.report(cumulative);
    if (turnOpen) {
      turnGrowth = UsageMeter.plus(turnGrowth, growth);
    } else {
      pendingGrowth = UsageMeter.plus(pendingGrowth, growth);
    }
    progress.add(
        new RunEvent.UsageUpdated(
            taskId, UsageSplits.of(meter.total()), UsageSplits.unreported(meter.total())));
  }

  /**
   * A harness that answers with its result alone (no {@code text}, no tool call) still took a turn:
   * a non-blank result when no turn ever opened opens and closes one here, under {@code max_turns}
   * like any other (docs/run-semantics.md §7).
   */
  private void onTurnEnd(Event.TurnEnd t) {
    if (turns == 0 && !t.result().isBlank() && !openTurnIfNeeded()) {
      return;
    }
    closeTurn();
    decide(new Ending.Completed(t.result()));
  }

  private void onTurnFailed(Event.TurnFailed f) {
    closeTurn();
    FailureKind kind = f.failure().kind();
    boolean sessionGone =
        resumed && !sawSession && (kind == FailureKind.HARNESS_ERROR || kind == FailureKind.OTHER);
    trace.add(
        TraceRecord.of("harness_failed")
            .with("kind", kind.witName())
            .with("message", f.failure().message())
            .with("source", "harness"));
    decide(
        new Ending.TurnFailed(
            sessionGone ? Code.E_RUN_036 : Code.E_RUN_033, kind, f.failure().message()));
  }

  private void onQuota(Event.Quota q) {
    QuotaBook.Applied applied = quota.apply(q.windows());
    for (String refusal : applied.refusals()) {
      trace.add(TraceRecord.of("harness_note").with("note", refusal));
      progress.add(new RunEvent.Note(taskId, refusal));
    }
    if (!applied.accepted().isEmpty()) {
      trace.add(TraceRecord.of("quota").with("windows", Traces.windows(applied.accepted())));
      progress.add(new RunEvent.QuotaUpdated(taskId, Traces.runWindows(quota.windows())));
    }
  }

  /**
   * Opens a turn when none is open; returns false when opening would pass {@code max_turns}, in
   * which case the run ends at once and the event that would have opened it is not applied.
   */
  private boolean openTurnIfNeeded() {
    if (turnOpen) {
      return true;
    }
    if (maxTurns.isPresent() && turns + 1L > maxTurns.getAsLong()) {
      trace.add(
          TraceRecord.of("harness_failed")
              .with("kind", FailureKind.MAX_TURNS.witName())
              .with("message", "more than " + maxTurns.getAsLong() + " turns")
              .with("source", "runtime"));
      decide(new Ending.MaxTurns(maxTurns.getAsLong()));
      return false;
    }
    turns++;
    turnOpen = true;
    turnCalledTool = false;
    turnFirstTool = Optional.empty();
    turnGrowth = pendingGrowth;
    pendingGrowth = Usage.NONE;
    return true;
  }

  private void closeTurn() {
    if (!turnOpen) {
      return;
    }
    turnOpen = false;
    trace.add(
        TraceRecord.of("inference")
            .with("turn", turns)
            .with("usage_growth", Traces.usage(turnGrowth))
            .with("decision", turnCalledTool ? "tool_call" : "end_turn")
            .with("first_tool", turnFirstTool.orElse(null)));
  }

  private void checkSpendCeiling() {
    if (maxSessionTokens.isEmpty()) {
      return;
    }
    long spent = UsageMeter.spend(meter.total());
    if (spent >= maxSessionTokens.getAsLong()) {
      decide(new Ending.SpendCeiling(spent, maxSessionTokens.getAsLong()));
    }
  }

  private void decide(Ending e) {
    if (ending.isEmpty()) {
      ending = Optional.of(e);
      decided = Optional.of(e);
    }
  }
}
