package io.capsule.runtime.javadsl;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.CapsuleSerializable;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What a run tells whoever watches it, in order: the same facts the runner protocol sends as
 * progress, typed. The last event of every run is {@link Finished}, exactly once. Records of plain
 * values, so they may cross nodes.
 */
public sealed interface RunEvent extends CapsuleSerializable {

  String taskId();

  /** The progress kind this event is sent as (docs/runner-protocol.md). */
  String kind();

  /** The run entered a phase: accepted, starting, running, interrupting, finished. */
  record StateChanged(String taskId, RunPhase phase) implements RunEvent {
    @Override
    public String kind() {
      return "state";
    }
  }

  /** The harness started (or resumed) its session. */
  record SessionStarted(String taskId, String sessionId, String auth, Optional<String> model)
      implements RunEvent {
    @Override
    public String kind() {
      return "note";
    }
  }

  /** More text of the message in progress; {@code soFar} is the whole message until now. */
  record TextDelta(String taskId, String delta, String soFar) implements RunEvent {
    @Override
    public String kind() {
      return "text";
    }
  }

  /** A complete text message; it replaces whatever was streamed for it. */
  record TextCompleted(String taskId, String text) implements RunEvent {
    @Override
    public String kind() {
      return "text";
    }
  }

  record ThinkingDelta(String taskId, String delta, String soFar) implements RunEvent {
    @Override
    public String kind() {
      return "thinking";
    }
  }

  record ThinkingCompleted(String taskId, String text) implements RunEvent {
    @Override
    public String kind() {
      return "thinking";
    }
  }

  /** The model began writing a tool call. */
  record ToolStarted(String taskId, String callId, String name) implements RunEvent {
    @Override
    public String kind() {
      return "tool";
    }
  }

  /** Input bytes of a call written so far (cumulative, only growing). */
  record ToolProgress(String taskId, String callId, long inputBytes) implements RunEvent {
    @Override
    public String kind() {
      return "tool";
    }
  }

  /** A complete tool call in turn {@code turn}; {@code input} is the call's JSON. */
  record ToolCalled(String taskId, String callId, String name, String input, int turn)
      implements RunEvent {
    @Override
    public String kind() {
      return "tool";
    }
  }

  /** The result of a tool call. */
  record ToolResulted(String taskId, String callId, String output, boolean isError)
      implements RunEvent {
    @Override
    public String kind() {
      return "tool";
    }
  }

  /**
   * A call the harness made to the capsule's own tools through the run's tool bridge, as the bridge
   * saw it: once when it starts ({@code status} {@code running}) and once when it ends ({@code ok},
   * {@code tool_error}, {@code refused}, {@code timed_out}, {@code abandoned}, {@code stopped} or
   * {@code failed}; a refused call only ends). Distinct from {@link ToolCalled}/{@link
   * ToolResulted}, which are the harness's own account from its output (its call id, the input and
   * output text): the bridge has its own ids and knows sizes, timing and how the process ended, and
   * the two views of one call are not joined (a harness may also call tools that are not the
   * bridge's).
   *
   * @param callId the bridge's id ({@code call-1}, …)
   * @param turn the run's turn when the event was seen (0 before the first turn)
   * @param outputBytes the result's size; 0 while running
   * @param durationMs 0 while running
   * @param code the diagnostic code of a refused, killed or failed call
   */
  record BridgeCall(
      String taskId,
      String callId,
      String tool,
      int turn,
      String status,
      int inputBytes,
      int outputBytes,
      long durationMs,
      Optional<String> code)
      implements RunEvent {
    @Override
    public String kind() {
      return "tool";
    }
  }

  /**
   * Cumulative usage of the run so far, on the wire form, and the wire members the driver never
   * reported ({@code cache_write}, {@code thinking}, …): those read 0 in {@code usage} but are "not
   * reported", never 0, in the JSON form and the live view (docs/run-semantics.md §7).
   */
  record UsageUpdated(String taskId, UsageSplit usage, Set<String> unreported) implements RunEvent {
    public UsageUpdated {
      unreported = Set.copyOf(unreported);
    }

    /** Every member reported. */
    public UsageUpdated(String taskId, UsageSplit usage) {
      this(taskId, usage, Set.of());
    }

    @Override
    public String kind() {
      return "usage";
    }
  }

  /** Subscription windows as the harness last reported them (all known windows). */
  record QuotaUpdated(String taskId, List<Window> windows) implements RunEvent {
    public QuotaUpdated {
      windows = List.copyOf(windows);
    }

    @Override
    public String kind() {
      return "quota";
    }
  }

  /**
   * One quota window: {@code used} in 0..1, {@code resetsAt} ms since the epoch, {@code state}
   * ok/warning/exhausted.
   */
  record Window(
      String name,
      Optional<Double> used,
      Optional<Long> resetsAt,
      Optional<Long> windowMinutes,
      Optional<String> state) {}

  record SuggestedPrompt(String taskId, String prompt) implements RunEvent {
    @Override
    public String kind() {
      return "suggested_prompt";
    }
  }

  /** Something the harness or runtime notes; informational. */
  record Note(String taskId, String text) implements RunEvent {
    @Override
    public String kind() {
      return "note";
    }
  }

  /** The harness retries its provider. */
  record Retry(String taskId, long attempt, String reason) implements RunEvent {
    @Override
    public String kind() {
      return "retry";
    }
  }

  /** A warning with its catalog code (e.g. {@code W-RUN-002}, {@code W-SEC-031}). */
  record Warning(String taskId, String code, String message) implements RunEvent {
    @Override
    public String kind() {
      return "note";
    }
  }

  /**
   * A sharded run's attempt was lost with the node that hosted it (the harness died with it), and
   * the run starts again on another runner node ({@code RunRequest.retryOnNodeLoss}). Every event
   * before this one belongs to the lost attempt {@code attempt}; the events after it to the next.
   *
   * @param attempt the lost attempt, from 1
   * @param node the lost node's address
   * @param code why it was lost ({@code E-CLU-001})
   */
  record AttemptLost(String taskId, int attempt, String node, String code, String message)
      implements RunEvent {
    @Override
    public String kind() {
      return "note";
    }
  }

  /** The run's outcome: always the last event, exactly once. */
  record Finished(RunOutcome outcome) implements RunEvent {
    @Override
    public String taskId() {
      return outcome.taskId();
    }

    @Override
    public String kind() {
      return "report";
    }
  }
}
