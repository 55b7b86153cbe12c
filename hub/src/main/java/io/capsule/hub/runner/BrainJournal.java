package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The brain's writes to its {@link HubJournal}, group-committed and never waited for: the brain
 * hands over what a message changed (its journal entries) with what must follow once they are
 * stored (acks, events, sends, replies: the <em>effects</em>), and goes on with the next message.
 * One write is in flight at a time; whatever arrives meanwhile, from any connection of the project,
 * goes into the next one, so a write's round trip is paid once per batch and throughput grows with
 * the load.
 *
 * <p>Order: effects are kept in one lane per runner. An effect runs only after every entry queued
 * before it in its lane is stored (an effect with no entries of its own, a pong or an error frame,
 * waits only for those), so a runner sees its acks, pongs and the hub's numbered frames in the
 * order the brain decided them, and nothing reveals an entry the store has not confirmed. Lanes of
 * other runners do not wait for each other. Writes go out in order, so each task's entries reach
 * the store in order. The brain computes each effect's content when it decides (an ack map, a
 * replay list), from state that only holds what is queued before it, so what it says is true by the
 * time it runs.
 *
 * <p>Bound: at most {@link #MAX_PENDING_ENTRIES} entries or {@link #MAX_PENDING_BYTES} bytes of
 * frames wait for the store; past either the brain stops reading from the gateways ({@link
 * #answer}: runner frames are not acknowledged as read, their sockets back-pressure) until a write
 * completes. Back-pressure rather than a refusal: a runner's frames are valid and it would only
 * send them again, while a store that is slow for a moment catches up. What a socket already sent
 * on its way is still read past the bound: at most {@link RunnerGateway#IN_FLIGHT} batches per
 * connection, each at most {@link RunnerGateway#BATCH_WEIGHT} of text or one frame up to the cap.
 *
 * <p>Failure: the first failed write is kept ({@link #failure()}), the brain stops, and the effects
 * of every entry not confirmed never run: nothing is acked, published or sent that was not stored.
 * A write is bounded by the journal (the persistent journal's write timeout).
 *
 * <p>Fence: no write starts while this node is cut off from its cluster ({@code cutOff}, {@link
 * io.capsule.hub.standing.NodeStanding}); it waits, re-checked every {@link #FENCE_RECHECK}, and
 * goes once the node hears its cluster again. A node woken from a freeze or on the minority side of
 * a partition may hold a brain that the rest of the cluster has already started elsewhere from the
 * store: held writes keep it from being a second writer (its frames are replayed to the new brain
 * by their runners, its acks never sent), until the node is downed and stops (docs/settings.md, "A
 * cut-off node lets go"). Touched by the brain's actor only.
 */
final class BrainJournal {
  /**
   * 4,096 entries: a write of the persistent journal takes a few milliseconds per hundred rows, so
   * the backlog stays under a second of the store's work while hundreds of runners stream.
   */
  static final int MAX_PENDING_ENTRIES = 4096;

  /** 16 MiB of frame text: sixteen frames at the 1 MiB cap, or thousands of ordinary ones. */
  static final long MAX_PENDING_BYTES = 16L << 20;

  /**
   * How often a write held by the fence asks again: the node's verdict changes on the cluster's
   * heartbeats (every 500 ms), so 200 ms adds little to a held write once the node is back.
   */
  static final Duration FENCE_RECHECK = Duration.ofMillis(200);

  /** A write finished (failure null: stored). */
  record Written(Throwable failure) implements HubCore.Command {}

  /** Time to ask the fence again. */
  record Recheck() implements HubCore.Command {}

  /** Entries of one decision and what follows once they are stored. */
  private static final class Unit {
    final RunnerKey lane;
    final List<HubJournal.Entry> entries;
    final long bytes;
    final Runnable effect;
    final CompletableFuture<?> reply;
    boolean stored;

    Unit(
        RunnerKey lane,
        List<HubJournal.Entry> entries,
        long bytes,
        Runnable effect,
        CompletableFuture<?> reply) {
      this.lane = lane;
      this.entries = entries;
      this.bytes = bytes;
      this.effect = effect;
      this.reply = reply;
      this.stored = entries.isEmpty();
    }
  }

  private final HubJournal journal;
  private final ActorContext<HubCore.Command> ctx;
  private final HubTraffic traffic;
  private final Supplier<CompletionStage<Done>> eventsDrained;
  private final TimerScheduler<HubCore.Command> timers;
  private final BooleanSupplier cutOff;
  private boolean fenced;

  /** Inbound frames read but not yet answered: the backlog is over its bound. */
  private final List<HubCore.Inbound> unanswered = new ArrayList<>();

  private final Map<RunnerKey, ArrayDeque<Unit>> lanes = new HashMap<>();
  private List<Unit> pending = new ArrayList<>();
  private List<Unit> inFlight = List.of();
  private int pendingEntries;
  private long pendingBytes;
  private ProtocolException failure;

  /**
   * @param eventsDrained completes when the events offered so far entered the hub's event stream
   * @param cutOff whether this node is cut off from its cluster now (no write may start)
   */
  BrainJournal(
      HubJournal journal,
      ActorContext<HubCore.Command> ctx,
      TimerScheduler<HubCore.Command> timers,
      Supplier<CompletionStage<Done>> eventsDrained,
      BooleanSupplier cutOff) {
    this.journal = journal;
    this.ctx = ctx;
    this.timers = timers;
    this.cutOff = cutOff;
    this.eventsDrained = eventsDrained;
    this.traffic = HubTraffic.get(ctx.getSystem());
  }

  /** As {@link #then(RunnerKey, List, long, Runnable, CompletableFuture)}, with no reply. */
  void then(RunnerKey lane, List<HubJournal.Entry> entries, long bytes, Runnable effect) {
    then(lane, entries, bytes, effect, null);
  }

  /**
   * Journals {@code entries} (in order, maybe none) and runs {@code effect} on the brain's thread
   * once they and everything queued before them in {@code lane} are stored: at once when there is
   * nothing to wait for. {@code reply}, if any, is failed when the entries are never stored (the
   * brain stopped first), so no caller waits forever.
   *
   * @param bytes the entries' size as frame text, for the bound
   */
  void then(
      RunnerKey lane,
      List<HubJournal.Entry> entries,
      long bytes,
      Runnable effect,
      CompletableFuture<?> reply) {
    ArrayDeque<Unit> queue = lanes.get(lane);
    if (entries.isEmpty() && (queue == null || queue.isEmpty())) {
      effect.run();
      return;
    }
    Unit u = new Unit(lane, List.copyOf(entries), bytes, effect, reply);
    lanes.computeIfAbsent(lane, k -> new ArrayDeque<>()).add(u);
    if (!u.stored) {
      pending.add(u);
      pendingEntries += u.entries.size();
      pendingBytes += bytes;
      traffic.journalPending(pendingEntries);
      flush();
    }
  }

  /** Nothing waits for the store. */
  boolean idle() {
    return inFlight.isEmpty() && pending.isEmpty();
  }

  /** Below the bound: the brain may read the next runner frame. */
  boolean hasRoom() {
    return pendingEntries < MAX_PENDING_ENTRIES && pendingBytes < MAX_PENDING_BYTES;
  }

  /**
   * Lets the gateway read the runner's next frame: at once while the backlog is under its bound (so
   * frames of one connection batch too), else, in order, once a write brings it under. Also only
   * after the events offered so far entered the event stream: a slow event consumer back-pressures
   * the socket instead of growing a buffer. Never waits for the brain's own outbound (the runner
   * may be waiting for us to read before it reads: a cross-wait through two full TCP buffers).
   */
  void answer(HubCore.Inbound in) {
    if (!hasRoom() || !unanswered.isEmpty()) {
      unanswered.add(in); // at most RunnerGateway.IN_FLIGHT per connection
      return;
    }
    RunnerGateway.Consumed consumed = new RunnerGateway.Consumed(in.id());
    eventsDrained.get().whenComplete((d, e) -> in.replyTo().tell(consumed));
  }

  /**
   * The write in flight finished: on success runs the effects it released, in order, and starts the
   * next write with whatever accumulated; false when it failed (see {@link #failure()}).
   */
  boolean onWritten(Written w) {
    if (w.failure() != null) {
      failure = asFailure(w.failure());
      return false;
    }
    List<Unit> done = inFlight;
    inFlight = List.of();
    for (Unit u : done) {
      u.stored = true;
      pendingEntries -= u.entries.size();
      pendingBytes -= u.bytes;
    }
    traffic.journalPending(pendingEntries);
    flush(); // before the effects: the next batch is on its way while they run
    for (Unit u : done) {
      drain(u.lane);
    }
    List<HubCore.Inbound> waiting = List.copyOf(unanswered);
    unanswered.clear();
    waiting.forEach(this::answer); // in order; over the bound again, they wait again
    return true;
  }

  /** The failure that stopped the brain, or null while the journal keeps everything. */
  ProtocolException failure() {
    return failure;
  }

  /** The brain stops: whoever waits for an entry that will never be stored hears so now. */
  void abandon(Throwable why) {
    for (ArrayDeque<Unit> queue : lanes.values()) {
      for (Unit u : queue) {
        if (u.reply != null) {
          u.reply.completeExceptionally(why);
        }
      }
    }
    lanes.clear();
  }

  private void drain(RunnerKey lane) {
    ArrayDeque<Unit> queue = lanes.get(lane);
    while (queue != null && !queue.isEmpty() && queue.peek().stored) {
      queue.poll().effect.run();
    }
    if (queue != null && queue.isEmpty()) {
      lanes.remove(lane);
    }
  }

  /** The fence's timer: try the held write again. */
  void onRecheck() {
    flush();
  }

  private void flush() {
    if (!inFlight.isEmpty() || pending.isEmpty() || failure != null) {
      return;
    }
    if (cutOff.getAsBoolean()) {
      if (!fenced) {
        fenced = true;
        ctx.getLog()
            .warn(
                "this node is cut off from its cluster: the brain holds its {} pending entries"
                    + " (E-HUB-009)",
                pendingEntries);
      }
      timers.startSingleTimer("journal-fence", new Recheck(), FENCE_RECHECK);
      return;
    }
    if (fenced) {
      fenced = false;
      ctx.getLog().info("this node hears its cluster again: the brain writes its held entries");
    }
    inFlight = pending;
    pending = new ArrayList<>();
    List<HubJournal.Entry> batch = new ArrayList<>(pendingEntries);
    for (Unit u : inFlight) {
      batch.addAll(u.entries);
    }
    traffic.journalWrite(batch.size());
    CompletionStage<Void> written;
    try {
      written = journal.appendAllAsync(batch);
    } catch (RuntimeException e) {
      written = CompletableFuture.failedFuture(e);
    }
    ctx.pipeToSelf(written, (ok, e) -> new Written(e));
  }

  private static ProtocolException asFailure(Throwable e) {
    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (cause instanceof ProtocolException p) {
      return p;
    }
    return new ProtocolException(
        Diagnostic.of(Code.E_PRO_010, "the hub journal failed: " + cause.getMessage()), cause);
  }
}
