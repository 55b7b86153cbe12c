package io.capsule.runtime.javadsl;

import io.capsule.runtime.CapsuleRuntime;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A started run: cancel it, or wait for its outcome. Thread-safe; {@link #cancel()} may be called
 * from any thread, any number of times (a cancel after the outcome changes nothing).
 */
public final class RunHandle {

  private final String taskId;
  private final ActorRef<CapsuleRuntime.Command> runtime;
  private final CompletionStage<RunOutcome> outcome;

  RunHandle(
      String taskId,
      ActorRef<CapsuleRuntime.Command> runtime,
      CompletionStage<RunOutcome> outcome) {
    this.taskId = taskId;
    this.runtime = runtime;
    this.outcome = outcome;
  }

  public String taskId() {
    return taskId;
  }

  /** Cancels the task: the turn is interrupted by the driver's method; the outcome is canceled. */
  public void cancel() {
    cancel("canceled by the caller");
  }

  public void cancel(String reason) {
    runtime.tell(new CapsuleRuntime.CancelRun(taskId, reason));
  }

  /** Completes with the run's one outcome (never exceptionally for a run that ends). */
  public CompletionStage<RunOutcome> outcome() {
    return outcome;
  }
}
