package io.capsule.hub.runner;

import io.capsule.hub.runner.HubCore.Command;
import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.ws.OrderedQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * The hub actor's last phases, after a {@link HubCore.Shutdown} or a store failure. Draining: no
 * new work (requests are refused, frames waiting for a write were dropped: never acked, so their
 * runners replay them to the next hub) while the writes in flight finish; what they kept is
 * published as usual, so that everything the journal has was published once (a restarted hub never
 * publishes again what it restores). Then the event stream ends, completed or failed with the
 * store's {@code E-PRO-010}, and the actor stops, or after a failure refuses everything until its
 * owner's {@code Shutdown}. Kept frames get no {@code ack} here: the connections are closing, and
 * the next hub acks the replay it finds already kept.
 */
final class HubDrain extends AbstractBehavior<Command> {
  private final OrderedQueue<HubEvent> events;
  private final CompletableFuture<Done> outcome;
  private final Map<Long, RunnerConn> conns;
  private final List<CompletableFuture<Done>> stopped;
  private int writing;
  private ProtocolException failure;

  private HubDrain(
      ActorContext<Command> ctx,
      OrderedQueue<HubEvent> events,
      CompletableFuture<Done> outcome,
      Map<Long, RunnerConn> conns,
      List<CompletableFuture<Done>> stopped,
      int writing,
      ProtocolException failure) {
    super(ctx);
    this.events = events;
    this.outcome = outcome;
    this.conns = conns;
    this.stopped = new ArrayList<>(stopped);
    this.writing = writing;
    this.failure = failure;
  }

  /**
   * Takes over from the running hub: {@code writing} journal writes are in flight; {@code failure}
   * is the store's, or null for a shutdown; {@code stopped} complete once the events are out.
   */
  static Behavior<Command> start(
      OrderedQueue<HubEvent> events,
      CompletableFuture<Done> outcome,
      Map<Long, RunnerConn> conns,
      List<CompletableFuture<Done>> stopped,
      int writing,
      ProtocolException failure) {
    return Behaviors.setup(
        ctx ->
            new HubDrain(ctx, events, outcome, conns, stopped, writing, failure).stopIfDrained());
  }

  /** Fails whoever waits for a hub frame that will never be written. */
  static void lose(List<JournalWrite> writes, Throwable why) {
    for (JournalWrite jw : writes) {
      if (jw instanceof JournalWrite.Sent sent) {
        sent.lost().accept(why);
      }
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(HubCore.Written.class, this::onWritten)
        .onMessage(HubCore.Shutdown.class, this::onShutdown)
        .onMessage(HubCore.Closed.class, c -> drop(conns.remove(c.id())))
        .onMessage(HubCore.Opened.class, o -> drop(new RunnerConn(o)))
        .onMessage(HubCore.Inbound.class, in -> released(in.done()))
        .onMessage(HubCore.Assign.class, a -> refuse(a.reply()))
        .onMessage(HubCore.Cancel.class, c -> refuse(c.reply()))
        .onMessage(HubCore.Kick.class, k -> refuse(k.reply()))
        .onAnyMessage(m -> this) // timers and settlements of the running phase
        .build();
  }

  private Behavior<Command> onWritten(HubCore.Written w) {
    writing--;
    if (w.failure() != null) {
      failure = failure == null ? HubCore.storeFailure(w.failure()) : failure;
      lose(w.batch(), failure);
      return stopIfDrained();
    }
    for (JournalWrite jw : w.batch()) {
      if (jw instanceof JournalWrite.Applied a) {
        RunnerKey key = a.entry().runner();
        events.offer(
            a.entry().frame() instanceof TaskReport r
                ? new HubEvent.Report(key, r)
                : new HubEvent.Progress(key, (TaskProgress) a.entry().frame()));
      } else if (jw instanceof JournalWrite.Sent sent) {
        sent.kept().run();
      }
    }
    return stopIfDrained();
  }

  private Behavior<Command> onShutdown(HubCore.Shutdown s) {
    stopped.add(s.done());
    return stopIfDrained();
  }

  private Behavior<Command> stopIfDrained() {
    if (writing > 0) {
      return this;
    }
    // The queue completes in-band, after every event; a failure is told through the outcome the
    // event source ends with. Failing the queue (or the broadcast hub) would overtake events still
    // in their buffers: a consumer would miss events the journal kept.
    events.complete();
    CompletionStage<Done> drained = events.drained();
    ProtocolException why = failure;
    drained.thenRun(
        () -> {
          if (why == null) {
            outcome.complete(Done.getInstance());
          } else {
            outcome.completeExceptionally(why);
          }
        });
    stopped.forEach(d -> drained.thenRun(() -> d.complete(Done.getInstance())));
    if (!stopped.isEmpty()) {
      return Behaviors.stopped();
    }
    // A store failure ended it: refuse until the owner's Shutdown, which then stops at once.
    return Behaviors.receive(Command.class)
        .onMessage(HubCore.Assign.class, a -> refuse(a.reply()))
        .onMessage(HubCore.Cancel.class, c -> refuse(c.reply()))
        .onMessage(HubCore.Kick.class, k -> refuse(k.reply()))
        .onMessage(HubCore.Inbound.class, in -> released(in.done()))
        .onMessage(HubCore.Opened.class, o -> drop(new RunnerConn(o)))
        .onMessage(
            HubCore.Shutdown.class,
            sd -> {
              drained.thenRun(() -> sd.done().complete(Done.getInstance()));
              return Behaviors.stopped();
            })
        .onAnyMessage(m -> Behaviors.same())
        .build();
  }

  private Behavior<Command> refuse(CompletableFuture<?> reply) {
    reply.completeExceptionally(
        failure != null ? failure : new IllegalStateException("the hub is shutting down"));
    return Behaviors.same();
  }

  private static Behavior<Command> released(CompletableFuture<Done> done) {
    done.complete(Done.getInstance());
    return Behaviors.same();
  }

  private static Behavior<Command> drop(RunnerConn c) {
    if (c != null) {
      c.opened.out().complete();
      c.opened.control().complete(new ServerSocket.Drop());
    }
    return Behaviors.same();
  }
}
