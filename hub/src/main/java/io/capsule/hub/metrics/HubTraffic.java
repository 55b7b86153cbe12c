package io.capsule.hub.metrics;

import io.capsule.hub.runner.RunnerKey;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * What the hub's protocol actor did on the wire, as plain counts it bumps with one-line calls:
 * frames sent to runners, frames sent again after a runner's hello (replayed), and the bytes of
 * out-of-order frames it holds per runner, and its journal writes (how many, how many entries they
 * carried, how many entries wait for the store). {@link HubMetrics#traffic} turns them into meters
 * read at each scrape, so the protocol actor needs no metrics code.
 *
 * <p>An actor-system extension: a hub node is one system; in a cluster each node counts its own.
 *
 * <p>Threading: written by the hub's actor, read by any scraping thread.
 */
public final class HubTraffic implements Extension {
  private static final Id ID = new Id();

  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong replayed = new AtomicLong();
  private final AtomicLong journalWrites = new AtomicLong();
  private final AtomicLong journalEntries = new AtomicLong();
  private final AtomicLong journalPending = new AtomicLong();

  /** Held bytes per runner; a runner holding nothing has no entry, so the map stays small. */
  private final Map<RunnerKey, Long> held = new ConcurrentHashMap<>();

  HubTraffic() {}

  public static HubTraffic get(ActorSystem<?> system) {
    return ID.apply(system);
  }

  /** One {@code task.assign} or {@code task.cancel} numbered for a runner (sent or kept for it). */
  public void sent() {
    sent.incrementAndGet();
  }

  /** {@code frames} sent again because a runner's hello did not list them as received. */
  public void replayed(int frames) {
    replayed.addAndGet(frames);
  }

  /** The runner's held out-of-order frames now take {@code bytes}. */
  public void held(RunnerKey runner, long bytes) {
    if (bytes <= 0) {
      held.remove(runner);
    } else {
      held.put(runner, bytes);
    }
  }

  /** One write of {@code entries} journal entries started (a batch of what arrived together). */
  public void journalWrite(int entries) {
    journalWrites.incrementAndGet();
    journalEntries.addAndGet(entries);
  }

  /** Journal entries now waiting for the store (written or about to be). */
  public void journalPending(long entries) {
    journalPending.set(entries);
  }

  public long journalWriteCount() {
    return journalWrites.get();
  }

  public long journalEntryCount() {
    return journalEntries.get();
  }

  public long journalPendingCount() {
    return journalPending.get();
  }

  public long sentCount() {
    return sent.get();
  }

  public long replayedCount() {
    return replayed.get();
  }

  public long heldBytes() {
    return held.values().stream().mapToLong(Long::longValue).sum();
  }

  private static final class Id extends ExtensionId<HubTraffic> {
    @Override
    public HubTraffic createExtension(ActorSystem<?> system) {
      return new HubTraffic();
    }
  }
}
