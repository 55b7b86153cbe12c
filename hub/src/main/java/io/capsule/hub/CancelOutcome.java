package io.capsule.hub;

import io.capsule.protocol.frame.TaskCancel;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/** What a cancel through the API came to ({@link TaskQueue#cancel}); {@link HubApi} answers it. */
enum CancelOutcome {
  /** No such task. */
  UNKNOWN,
  /** Ended here, canceled, never (again) on a runner: it was queued, or taken back. */
  ENDED,
  /** Its runner was sent a {@code task.cancel} for the attempt it runs. */
  SENT,
  /** It has its report already: nothing to cancel. */
  FINISHED,
  /**
   * Asked, not delivered: no runner owns its attempt and it did not end within {@link #WAIT}. It
   * ends canceled when the hub takes it back.
   */
  REQUESTED;

  /**
   * How long a cancel the brain could not deliver waits for the task to end. The brain answers "no
   * runner owns it" for a task that just finished (its report is on the way to the book) and for
   * one it has just taken back (its notice is on the way to {@link TaskQueue#reclaim}): both end
   * the task within one pass of the hub's event stream, milliseconds; 10 s only bounds a hub whose
   * event stream stopped.
   */
  static final Duration WAIT = Duration.ofSeconds(10);

  /**
   * The outcome once the brain answered the cancel of {@code task}'s current attempt: {@link #SENT}
   * when it sent one; otherwise what ends the task tells, since the cancel was marked on it before
   * (its runner's report: {@link #FINISHED}; the take-back, which ends a task marked so: {@link
   * #ENDED}), or {@link #REQUESTED} after {@link #WAIT}.
   */
  static CompletionStage<CancelOutcome> afterBrain(Optional<TaskCancel> sent, TaskBook.Task task) {
    if (sent.isPresent()) {
      return CompletableFuture.completedFuture(SENT);
    }
    return task.ended()
        .thenApply(t -> t.canceledUnplaced() ? ENDED : FINISHED)
        .toCompletableFuture()
        .completeOnTimeout(REQUESTED, WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
