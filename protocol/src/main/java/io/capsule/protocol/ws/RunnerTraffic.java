package io.capsule.protocol.ws;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What a {@link RunnerClient} has done on the wire since it started, as plain counts for a metrics
 * layer to read (the protocol module knows no metrics library): frames sent, frames written again
 * from the replay buffer after a reconnect, reconnects, pongs heard and hubs given up as silent.
 *
 * <p>Threading: written by the client's actor only, readable from any thread (a scrape).
 */
public final class RunnerTraffic {
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong replayed = new AtomicLong();
  private final AtomicLong reconnects = new AtomicLong();
  private final AtomicLong pongs = new AtomicLong();
  private final AtomicLong silentHubs = new AtomicLong();

  RunnerTraffic() {}

  /** Frames the runner numbered and handed to the connection (or buffered while it was down). */
  public long sent() {
    return sent.get();
  }

  /**
   * Frames written from the replay buffer after a reconnect: those the hub had not acknowledged,
   * including any produced while the connection was down. The first connection replays nothing.
   */
  public long replayed() {
    return replayed.get();
  }

  /** Connections that became ready after the first one: each is a reconnect. */
  public long reconnects() {
    return reconnects.get();
  }

  /** Pongs heard from the hub: answers to the runner's pings ({@link Liveness}). */
  public long pongs() {
    return pongs.get();
  }

  /**
   * Connections given up because the hub said nothing for the silence limit ({@link Liveness}): a
   * node that stalled or was cut off without closing its sockets.
   */
  public long silentHubs() {
    return silentHubs.get();
  }

  void pong() {
    pongs.incrementAndGet();
  }

  void silentHub() {
    silentHubs.incrementAndGet();
  }

  void sent(int frames) {
    sent.addAndGet(frames);
  }

  void connected(boolean again, int replayedFrames) {
    if (again) {
      reconnects.incrementAndGet();
      replayed.addAndGet(replayedFrames);
    }
  }
}
