package io.capsule.hub;

import io.capsule.hub.runner.RunnerInfo;
import io.capsule.hub.runner.RunnerKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Since when each runner is disconnected, so that {@code GET /v1/runners} stops listing runners
 * that went away long ago ({@code capsule.hub.runner-age-out}) while still showing one that just
 * dropped (it may come back and resume). A runner this hub never saw connected (restored from the
 * journal) counts as disconnected since the hub started.
 *
 * <p>Thread-safe: the hub's event stream marks, HTTP request threads read.
 */
final class RunnerRoll {
  private final Clock clock;
  private final Duration ageOut;
  private final Instant started;
  private final Map<RunnerKey, Instant> downSince = new ConcurrentHashMap<>();
  private final Map<RunnerKey, Boolean> seenUp = new ConcurrentHashMap<>();

  RunnerRoll(Clock clock, Duration ageOut) {
    if (ageOut.isNegative()) {
      throw new IllegalArgumentException("capsule.hub.runner-age-out must be >= 0, not " + ageOut);
    }
    this.clock = clock;
    this.ageOut = ageOut;
    this.started = clock.instant();
  }

  /** The runner said hello on a new connection. */
  void up(RunnerKey runner) {
    seenUp.put(runner, true);
    downSince.remove(runner);
  }

  /** The runner's connection ended now. */
  void down(RunnerKey runner) {
    downSince.put(runner, clock.instant());
  }

  /** The runners to list: every connected one, and disconnected ones not yet aged out. */
  List<RunnerInfo> listed(List<RunnerInfo> known) {
    Instant now = clock.instant();
    return known.stream().filter(r -> r.connected() || !agedOut(r.key(), now)).toList();
  }

  private boolean agedOut(RunnerKey runner, Instant now) {
    Instant since = downSince.getOrDefault(runner, started);
    return Duration.between(since, now).compareTo(ageOut) >= 0 && !upAndNotDown(runner);
  }

  /** A runner whose hello raced its down mark: never hide what was just seen up and not down. */
  private boolean upAndNotDown(RunnerKey runner) {
    return seenUp.containsKey(runner) && !downSince.containsKey(runner);
  }
}
