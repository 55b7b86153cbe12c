package io.capsule.runtime.javadsl;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Hands a run's events on to the caller's listener (if any) and completes the handle's outcome at
 * {@link RunEvent.Finished}, then stops. One per run started through {@link EmbeddedRuntime}.
 */
final class RunRelay {

  private RunRelay() {}

  static Behavior<RunEvent> create(
      Optional<ActorRef<RunEvent>> downstream, CompletableFuture<RunOutcome> outcome) {
    ActorRef<RunEvent> to = downstream.orElse(null); // per event: no lambda, no Optional
    return Behaviors.receive(RunEvent.class)
        .onMessage(
            RunEvent.class,
            e -> {
              if (to != null) {
                to.tell(e);
              }
              if (e instanceof RunEvent.Finished f) {
                outcome.complete(f.outcome());
                return Behaviors.stopped();
              }
              return Behaviors.same();
            })
        .build();
  }
}
