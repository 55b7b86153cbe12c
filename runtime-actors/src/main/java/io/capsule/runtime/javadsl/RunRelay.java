package io.capsule.runtime.javadsl;

import java.util.ArrayList;
import java.util.List;
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

  /**
   * Most events in one chunk of {@link #chunked}: a parsed batch's events (tens, for real harness
   * output) travel as one, and a chunk stays small next to {@link EmbeddedRuntime#SOURCE_BUFFER}.
   */
  static final int CHUNK_MAX = 256;

  /**
   * The chunked relay's own wake-up, sent to itself: "hand on what you hold". A type of its own,
   * private to this class, so no event can be taken for it and it is never handed on. The relay's
   * behaviour takes {@code Object} and is handed out narrowed to {@link RunEvent}: no adapter and
   * no wrapper per event, only one more type test per message.
   */
  private enum HandOn {
    INSTANCE
  }

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

  /**
   * As {@link #create}, for a stream's source: the events go on in order as chunks of at most
   * {@link #CHUNK_MAX}, each chunk what arrived before the relay's wake-up (sent to itself with the
   * first event it holds, so it is queued behind the events already waiting, never behind time).
   * Why: the session hands a parsed batch's events on one message each, and a message per event
   * into the stream's interpreter was the run's last per-event actor hop (issue #15). {@link
   * RunEvent.Finished} ends the last chunk at once.
   */
  static Behavior<RunEvent> chunked(
      ActorRef<List<RunEvent>> downstream, CompletableFuture<RunOutcome> outcome) {
    return Behaviors.<Object>setup(ctx -> new Chunks(ctx.getSelf(), downstream, outcome).behavior())
        .narrow();
  }

  /** The chunked relay's state; confined to its actor. */
  private static final class Chunks {
    private final ActorRef<Object> self;
    private final ActorRef<List<RunEvent>> downstream;
    private final CompletableFuture<RunOutcome> outcome;
    private List<RunEvent> held = new ArrayList<>();
    private boolean wakeUpSent;

    Chunks(
        ActorRef<Object> self,
        ActorRef<List<RunEvent>> downstream,
        CompletableFuture<RunOutcome> outcome) {
      this.self = self;
      this.downstream = downstream;
      this.outcome = outcome;
    }

    Behavior<Object> behavior() {
      return Behaviors.receive(Object.class)
          .onMessage(RunEvent.class, this::on)
          .onMessage(HandOn.class, w -> onWakeUp())
          .build();
    }

    private Behavior<Object> onWakeUp() {
      wakeUpSent = false;
      handOn();
      return Behaviors.same();
    }

    private Behavior<Object> on(RunEvent e) {
      held.add(e);
      if (e instanceof RunEvent.Finished f) {
        handOn();
        outcome.complete(f.outcome());
        return Behaviors.stopped();
      }
      if (held.size() >= CHUNK_MAX) {
        handOn();
      } else if (!wakeUpSent) {
        wakeUpSent = true;
        self.tell(HandOn.INSTANCE);
      }
      return Behaviors.same();
    }

    private void handOn() {
      if (!held.isEmpty()) {
        downstream.tell(held); // handed over: this relay never touches it again
        held = new ArrayList<>();
      }
    }
  }
}
