package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.time.Duration;
import java.util.Optional;

/**
 * Maps how a run ended to its outcome (docs/runner-protocol.md, "How a capsule run fills a
 * report"): {@code done} for turn-end, {@code blocked} for what a person must fix before the
 * capsule can start, {@code failed} for everything else; {@code failure_type} is {@code canceled}
 * or the code with its kind.
 */
final class Outcomes {

  private Outcomes() {}

  static RunOutcome of(
      String taskId,
      Ending ending,
      long turns,
      UsageSplit usage,
      Optional<String> sessionId,
      Duration duration) {
    if (ending instanceof Ending.Completed c) {
      return new RunOutcome(
          taskId,
          RunStatus.DONE,
          Optional.of(c.result()),
          turns,
          usage,
          Optional.empty(),
          Optional.empty(),
          "the turn ended",
          sessionId,
          duration);
    }
    RunStatus status = ending instanceof Ending.Blocked ? RunStatus.BLOCKED : RunStatus.FAILED;
    Code code;
    String failureType;
    String message;
    if (ending instanceof Ending.TurnFailed f) {
      code = f.code();
      failureType = code.id() + ":" + f.kind().witName();
      message = f.message();
    } else if (ending instanceof Ending.MaxTurns m) {
      code = Code.E_RUN_033;
      failureType = code.id() + ":max-turns";
      message = "the run passed inference.max_turns (" + m.maxTurns() + ")";
    } else if (ending instanceof Ending.SpendCeiling s) {
      code = Code.E_RUN_040;
      failureType = code.id() + ":spend-ceiling";
      message = "the run spent " + s.spent() + " tokens, at or past its ceiling of " + s.ceiling();
    } else if (ending instanceof Ending.Inactive i) {
      code = Code.E_RUN_035;
      failureType = code.id();
      message = "the harness was silent for " + i.silentMillis() + " ms";
    } else if (ending instanceof Ending.Canceled c) {
      code = Code.E_RUN_040;
      failureType = "canceled";
      message = "the task was canceled: " + c.reason();
    } else if (ending instanceof Ending.DriverFailed d) {
      code = d.diagnostic().code();
      failureType = code.id();
      message = d.diagnostic().message();
    } else if (ending instanceof Ending.HarnessFailed h) {
      code = h.diagnostic().code();
      failureType = code.id();
      message = h.diagnostic().message();
    } else {
      Ending.Blocked b = (Ending.Blocked) ending;
      code = b.diagnostic().code();
      failureType = code.id();
      message = b.diagnostic().message();
    }
    return new RunOutcome(
        taskId,
        status,
        Optional.empty(),
        turns,
        usage,
        Optional.of(code.id()),
        Optional.of(failureType),
        message,
        sessionId,
        duration);
  }
}
