package io.capsule.runtime.run;

import io.capsule.config.diag.Diagnostic;
import io.capsule.runtime.bridge.ToolCallEvent;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.javadsl.RunEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * How a run accounts for its tool bridge's calls (issue 8 item 4): pure mapping from a {@link
 * ToolCallEvent} and the run's current turn to trace lines and progress. The run owns the state
 * (the turn, the calls in flight); this class owns the shapes.
 */
final class BridgeAccounting {

  private BridgeAccounting() {}

  /**
   * The trace's {@code status} word of a call status ({@code tool_error}, {@code timed_out}, …).
   */
  static String status(ToolCallEvent.CallStatus s) {
    return s.name().toLowerCase(Locale.ROOT);
  }

  /**
   * Trace lines for one event: nothing for a start (its {@code tool_call} is written once, when it
   * ends); for an end, the {@code tool_call} line (docs/run-semantics.md §10, with {@code source:
   * bridge} so it is told apart from the harness's own account of the same call) and, for a call
   * the harness abandoned, a {@code harness_note} saying so.
   */
  static List<TraceRecord> trace(ToolCallEvent e, int turn) {
    if (!(e instanceof ToolCallEvent.Finished f)) {
      return List.of();
    }
    List<TraceRecord> out = new ArrayList<>(2);
    out.add(
        TraceRecord.of("tool_call")
            .with("turn", turn)
            .with("name", f.tool())
            .with("id", f.callId())
            .with("input_bytes", f.inputBytes())
            .with("output_bytes", f.outputBytes())
            .with("duration_ms", f.duration().toMillis())
            .with("status", status(f.status()))
            .with("source", "bridge")
            .with("exit_code", f.exitCode().orElse(null))
            .with("code", f.diagnostic().map(d -> d.code().id()).orElse(null)));
    if (f.status() == ToolCallEvent.CallStatus.ABANDONED) {
      out.add(
          TraceRecord.of("harness_note")
              .with("note", "tool call abandoned by the harness (connection closed); killed")
              .with("id", f.callId())
              .with("name", f.tool()));
    }
    return out;
  }

  /** The {@code tool} progress event of one bridge event. */
  static RunEvent.BridgeCall progress(String taskId, ToolCallEvent e, int turn) {
    if (e instanceof ToolCallEvent.Finished f) {
      return new RunEvent.BridgeCall(
          taskId,
          f.callId(),
          f.tool(),
          turn,
          status(f.status()),
          f.inputBytes(),
          f.outputBytes(),
          f.duration().toMillis(),
          f.diagnostic().map(Diagnostic::code).map(c -> c.id()));
    }
    ToolCallEvent.Started s = (ToolCallEvent.Started) e;
    return new RunEvent.BridgeCall(
        taskId, s.callId(), s.tool(), turn, "running", s.inputBytes(), 0, 0, Optional.empty());
  }
}
