package io.capsule.runtime.javadsl;

import io.capsule.runtime.CapsuleRuntime;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A started run: cancel it, or wait for its outcome. Thread-safe; {@link #cancel()} may be called
 * from any thread, any number of times (a cancel after the outcome changes nothing).
 */
public final class RunHandle {

  private final String taskId;
  private final Consumer<String> canceler;
  private final CompletionStage<RunOutcome> outcome;

  RunHandle(
      String taskId,
      ActorRef<CapsuleRuntime.Command> runtime,
      CompletionStage<RunOutcome> outcome) {
    this(taskId, reason -> runtime.tell(new CapsuleRuntime.CancelRun(taskId, reason)), outcome);
  }

  /** A handle whose cancel is {@code canceler} (a sharded run's: to its entity, on any node). */
  RunHandle(String taskId, Consumer<String> canceler, CompletionStage<RunOutcome> outcome) {
    this.taskId = taskId;
    this.canceler = canceler;
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
    canceler.accept(reason);
  }

  /** Completes with the run's one outcome (never exceptionally for a run that ends). */
  public CompletionStage<RunOutcome> outcome() {
    return outcome;
  }
}
