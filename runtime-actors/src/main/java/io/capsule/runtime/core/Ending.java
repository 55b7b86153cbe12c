package io.capsule.runtime.core;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.FailureKind;
import java.util.Objects;

/**
 * Why a run ends (docs/run-semantics.md §9). The first ending decided wins, except that a cancel
 * makes the outcome canceled whatever follows. {@link #killAtOnce()} tells how the harness is
 * stopped: a terminal event gets the terminal grace; runtime limits and failures kill the group at
 * once.
 */
public sealed interface Ending {

  /** The {@code harness_exit} cause in the trace. */
  String cause();

  default boolean killAtOnce() {
    return true;
  }

  /** {@code turn-end(result)}: the run is done. */
  record Completed(String result) implements Ending {
    public Completed {
      Objects.requireNonNull(result, "result");
    }

    @Override
    public String cause() {
      return "terminal";
    }

    @Override
    public boolean killAtOnce() {
      return false;
    }
  }

  /**
   * {@code turn-failed}: E-RUN-033 with the kind, or E-RUN-036 when the resumed session is gone.
   */
  record TurnFailed(Code code, FailureKind kind, String message) implements Ending {
    public TurnFailed {
      Objects.requireNonNull(code, "code");
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(message, "message");
    }

    @Override
    public String cause() {
      return "terminal";
    }

    @Override
    public boolean killAtOnce() {
      return false;
    }
  }

  /** Opening a turn past {@code inference.max_turns}: E-RUN-033, kind max-turns, source runtime. */
  record MaxTurns(long maxTurns) implements Ending {
    @Override
    public String cause() {
      return "max_turns";
    }
  }

  /** A turn closed at or past {@code inference.max_session_tokens}. */
  record SpendCeiling(long spent, long ceiling) implements Ending {
    @Override
    public String cause() {
      return "spend_ceiling";
    }
  }

  /** No stdout line for the inactivity window: E-RUN-035. */
  record Inactive(long silentMillis) implements Ending {
    @Override
    public String cause() {
      return "inactivity";
    }
  }

  /** The task was canceled: from that moment the outcome is canceled. */
  record Canceled(String reason) implements Ending {
    public Canceled {
      Objects.requireNonNull(reason, "reason");
    }

    @Override
    public String cause() {
      return "canceled";
    }
  }

  /** A driver call failed: E-RUN-034 (trap, deadline, refused launch, bad plan or result). */
  record DriverFailed(Diagnostic diagnostic) implements Ending {
    public DriverFailed {
      Objects.requireNonNull(diagnostic, "diagnostic");
    }

    @Override
    public String cause() {
      return "driver_error";
    }
  }

  /** The harness could not be started or fed: E-RUN-007. */
  record HarnessFailed(Diagnostic diagnostic) implements Ending {
    public HarnessFailed {
      Objects.requireNonNull(diagnostic, "diagnostic");
    }

    @Override
    public String cause() {
      return "harness_error";
    }
  }

  /** The capsule cannot start for a reason a person must fix: the report says blocked. */
  record Blocked(Diagnostic diagnostic) implements Ending {
    public Blocked {
      Objects.requireNonNull(diagnostic, "diagnostic");
    }

    @Override
    public String cause() {
      return "blocked";
    }
  }
}
