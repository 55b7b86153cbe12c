package io.capsule.runtime.javadsl;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.CapsuleSerializable;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * How one run ended: exactly one per task, on every path.
 *
 * @param taskId the task
 * @param status done, failed or blocked
 * @param result the final result text ({@code turn-end}); empty otherwise
 * @param turns how many turns opened
 * @param usage the run's usage on the wire form (zeros where nothing was spent)
 * @param code the catalog code when the run did not complete, e.g. {@code E-RUN-033}
 * @param failureType the report's {@code failure_type}: {@code canceled}, or the code with its kind
 *     ({@code E-RUN-033:quota}); empty for a done run
 * @param message one line of what happened (the harness's or the runtime's words)
 * @param sessionId the harness session the run used (the reported one wins), when known
 * @param duration wall time from accept to outcome
 * @param unreported the {@code usage} members the driver never reported: 0 on the wire, "not
 *     reported" in the JSON form and the live view (docs/run-semantics.md §7)
 */
public record RunOutcome(
    String taskId,
    RunStatus status,
    Optional<String> result,
    long turns,
    UsageSplit usage,
    Optional<String> code,
    Optional<String> failureType,
    String message,
    Optional<String> sessionId,
    Duration duration,
    Set<String> unreported)
    implements CapsuleSerializable {

  /** An outcome whose usage members were all reported (or nothing ran to report them). */
  public RunOutcome(
      String taskId,
      RunStatus status,
      Optional<String> result,
      long turns,
      UsageSplit usage,
      Optional<String> code,
      Optional<String> failureType,
      String message,
      Optional<String> sessionId,
      Duration duration) {
    this(
        taskId,
        status,
        result,
        turns,
        usage,
        code,
        failureType,
        message,
        sessionId,
        duration,
        Set.of());
  }

  public RunOutcome {
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(usage, "usage");
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(failureType, "failureType");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(sessionId, "sessionId");
    Objects.requireNonNull(duration, "duration");
    unreported = Set.copyOf(unreported);
  }

  /** This outcome with {@code unreported} as the members the driver never reported. */
  public RunOutcome withUnreported(Set<String> members) {
    return new RunOutcome(
        taskId,
        status,
        result,
        turns,
        usage,
        code,
        failureType,
        message,
        sessionId,
        duration,
        members);
  }

  /** Whether the task was canceled (the report's failure type is {@code canceled}). */
  public boolean canceled() {
    return failureType.filter("canceled"::equals).isPresent();
  }
}
