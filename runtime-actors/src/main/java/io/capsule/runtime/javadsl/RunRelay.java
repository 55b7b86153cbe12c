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
 *
 * <p>A relay takes a {@link RunEvent} or a batch of them, a {@code List<RunEvent>} (a parsed
 * batch's events, one message from the run's session: {@code StartRun.listenerBatches}), in one
 * order. Its behaviour is therefore typed {@code Object}; spawn it and hand its ref out narrowed
 * ({@link #events}, {@link #batches}). A narrowed ref costs nothing per message: no adapter, no
 * wrapper.
 */
final class RunRelay {

  /**
   * Most events in one chunk of {@link #chunked}: a parsed batch's events (tens, for real harness
   * output) travel as one, and a chunk stays small next to {@link EmbeddedRuntime#SOURCE_BUFFER}.
   */
  static final int CHUNK_MAX = 256;

  /**
   * The chunked relay's own wake-up, sent to itself: "hand on what you hold". A type of its own,
   * private to this class, so no event can be taken for it and it is never handed on.
   */
  private enum HandOn {
    INSTANCE
  }

  private static final Behavior<Object> STOPPED = Behaviors.stopped();

  private RunRelay() {}

  /** A relay's ref as the listener of single events. */
  static ActorRef<RunEvent> events(ActorRef<Object> relay) {
    return relay.narrow();
  }

  /** A relay's ref as the listener of batches: the same actor as {@link #events}. */
  static ActorRef<List<RunEvent>> batches(ActorRef<Object> relay) {
    return relay.narrow();
  }

  /** Hands every event on to {@code downstream}, one message each, batches taken apart. */
  static Behavior<Object> create(
      Optional<ActorRef<RunEvent>> downstream, CompletableFuture<RunOutcome> outcome) {
    ActorRef<RunEvent> to = downstream.orElse(null); // per event: no lambda, no Optional
    return Behaviors.receive(Object.class)
        .onMessage(RunEvent.class, e -> on(e, to, outcome))
        .onMessage(List.class, batch -> onAll(batch, to, outcome))
        .build();
  }

  private static Behavior<Object> onAll(
      List<?> batch, ActorRef<RunEvent> to, CompletableFuture<RunOutcome> outcome) {
    for (Object e : batch) {
      if (on((RunEvent) e, to, outcome) == STOPPED) {
        return STOPPED;
      }
    }
    return Behaviors.same();
  }

  private static Behavior<Object> on(
      RunEvent e, ActorRef<RunEvent> to, CompletableFuture<RunOutcome> outcome) {
    if (to != null) {
      to.tell(e);
    }
    if (e instanceof RunEvent.Finished f) {
      outcome.complete(f.outcome());
      return STOPPED;
    }
    return Behaviors.same();
  }

  /**
   * As {@link #create}, for a stream's source: the events go on in order as chunks of at most
   * {@link #CHUNK_MAX}. A batch goes on as it comes (cut to {@link #CHUNK_MAX}), after what the
   * relay holds. Single events are held until the relay's wake-up (sent to itself with the first
   * event it holds, so it is queued behind the messages already waiting, never behind time), and go
   * on as one chunk. Why: a message per event into the stream's interpreter was the run's last
   * per-event actor hop (issue #15). {@link RunEvent.Finished} ends the last chunk at once.
   */
  static Behavior<Object> chunked(
      ActorRef<List<RunEvent>> downstream, CompletableFuture<RunOutcome> outcome) {
    return Behaviors.setup(ctx -> new Chunks(ctx.getSelf(), downstream, outcome).behavior());
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

    @SuppressWarnings("unchecked")
    Behavior<Object> behavior() {
      return Behaviors.receive(Object.class)
          .onMessage(RunEvent.class, this::on)
          .onMessage(List.class, batch -> onBatch((List<RunEvent>) batch))
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

    /**
     * The batch is the session's, immutable, and never touched again: handed on as it is (or its
     * views, when longer than a chunk), not copied.
     */
    private Behavior<Object> onBatch(List<RunEvent> batch) {
      handOn();
      int n = batch.size();
      for (int from = 0; from < n; from += CHUNK_MAX) {
        List<RunEvent> chunk =
            n <= CHUNK_MAX ? batch : batch.subList(from, Math.min(n, from + CHUNK_MAX));
        downstream.tell(chunk);
        // The session sends Finished alone; were it in a batch, it would be the batch's last.
        if (chunk.get(chunk.size() - 1) instanceof RunEvent.Finished f) {
          outcome.complete(f.outcome());
          return Behaviors.stopped();
        }
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
