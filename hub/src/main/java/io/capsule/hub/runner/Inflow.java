package io.capsule.hub.runner;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;

/**
 * Back-pressure from the store to the sockets. A runner frame is <em>unsettled</em> from the moment
 * the hub applies it until it is kept and its event entered the event stream. A connection may have
 * {@code perConnection} unsettled frames and all connections together {@code total}; past either,
 * the hub does not answer the socket stage's request for the next frame (the {@code done} of the
 * frame just handled is parked), so TCP pushes back on the runner instead of the hub buffering. A
 * socket stage asks for one frame at a time, so at most one is parked per connection.
 *
 * <p>Not thread-safe: the hub's actor owns it. No threads of its own; releasing completes futures
 * the socket streams wait on.
 */
final class Inflow {
  private final int perConnection;
  private final int total;
  private final Map<Long, Integer> unsettled = new HashMap<>();
  private final Map<Long, Parked> parked = new LinkedHashMap<>();
  private int all;

  private record Parked(CompletableFuture<Done> done, CompletionStage<?> after) {}

  Inflow(int perConnection, int total) {
    if (perConnection <= 0 || total <= 0) {
      throw new IllegalArgumentException("bounds must be positive");
    }
    this.perConnection = perConnection;
    this.total = total;
  }

  /** {@code n} frames of the connection became unsettled. */
  void add(long conn, int n) {
    unsettled.merge(conn, n, Integer::sum);
    all += n;
  }

  /** {@code n} frames of the connection settled: parked connections under the bounds go on. */
  void settle(long conn, int n) {
    int left = unsettled.getOrDefault(conn, 0) - n;
    if (left > 0) {
      unsettled.put(conn, left);
    } else {
      unsettled.remove(conn);
    }
    all -= n;
    release();
  }

  /**
   * The connection's last frame is handled: {@code done} completes after {@code after} now when the
   * connection and the hub are under their bounds, else when they get there.
   */
  void admit(long conn, CompletableFuture<Done> done, CompletionStage<?> after) {
    if (open(conn)) {
      after.whenComplete((d, e) -> done.complete(Done.getInstance()));
    } else {
      parked.put(conn, new Parked(done, after));
    }
  }

  /** The connection closed: whatever it parked goes on (its stream ends anyway). */
  void closed(long conn) {
    Parked p = parked.remove(conn);
    if (p != null) {
      p.done().complete(Done.getInstance());
    }
  }

  /** Frames unsettled over all connections. */
  int unsettled() {
    return all;
  }

  /** Whether the connection's socket is held back now. */
  boolean parked(long conn) {
    return parked.containsKey(conn);
  }

  private boolean open(long conn) {
    return all < total && unsettled.getOrDefault(conn, 0) < perConnection;
  }

  private void release() {
    var it = parked.entrySet().iterator();
    while (it.hasNext() && all < total) {
      var e = it.next();
      if (open(e.getKey())) {
        it.remove();
        e.getValue()
            .after()
            .whenComplete((d, x) -> e.getValue().done().complete(Done.getInstance()));
      }
    }
  }
}
