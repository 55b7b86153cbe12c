package io.capsule.runtime.bridge;

import io.capsule.config.diag.Diagnostic;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What the bridge tells its {@link ToolBridge.Listener} about one {@code tools/call}. The data is
 * turn-independent: the run attributes it to its open turn and traces it as {@code tool_call}.
 *
 * <p>A call that runs yields {@link Started} then exactly one {@link Finished}; a call refused by a
 * gate yields only a {@link Finished} with {@link CallStatus#REFUSED} and the refusal's diagnostic.
 */
public sealed interface ToolCallEvent {

  /** The bridge's own id for the call ({@code call-1}, {@code call-2}, …), unique per bridge. */
  String callId();

  /** The tool name as the client asked for it (cut to 64 characters for an unknown one). */
  String tool();

  /**
   * A call passed every gate and its process is starting.
   *
   * @param rpcId the JSON-RPC id of the {@code tools/call} request, as JSON text
   * @param inputBytes the UTF-8 size of the call's {@code arguments} JSON
   */
  record Started(String callId, String rpcId, String tool, int inputBytes)
      implements ToolCallEvent {
    public Started {
      Objects.requireNonNull(callId, "callId");
      Objects.requireNonNull(rpcId, "rpcId");
      Objects.requireNonNull(tool, "tool");
    }
  }

  /**
   * A call ended, one way or another.
   *
   * @param outputBytes the UTF-8 size of the text returned to the harness
   * @param duration from the request being read to the result being ready
   * @param exitCode the tool's exit code when it exited by itself
   * @param diagnostic why it was refused, killed or failed; empty for {@code OK} and {@code
   *     TOOL_ERROR}
   */
  record Finished(
      String callId,
      String rpcId,
      String tool,
      int inputBytes,
      int outputBytes,
      Duration duration,
      CallStatus status,
      Optional<Integer> exitCode,
      Optional<Diagnostic> diagnostic)
      implements ToolCallEvent {
    public Finished {
      Objects.requireNonNull(callId, "callId");
      Objects.requireNonNull(rpcId, "rpcId");
      Objects.requireNonNull(tool, "tool");
      Objects.requireNonNull(duration, "duration");
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(exitCode, "exitCode");
      Objects.requireNonNull(diagnostic, "diagnostic");
    }
  }

  /** How a call ended; the {@code status} of the trace's {@code tool_call}. */
  enum CallStatus {
    /** The tool exited 0. */
    OK,
    /** The tool exited non-zero (an {@code isError} result, not a bridge failure). */
    TOOL_ERROR,
    /** A gate refused it; it never ran. */
    REFUSED,
    /** It overran the call timeout; its process group was killed. */
    TIMED_OUT,
    /** The harness closed the connection mid-call; its process group was killed. */
    ABANDONED,
    /** The bridge stopped (the run ended) mid-call; its process group was killed. */
    STOPPED,
    /** Its process could not be started. */
    FAILED
  }
}
