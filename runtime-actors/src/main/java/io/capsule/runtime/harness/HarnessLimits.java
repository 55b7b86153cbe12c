package io.capsule.runtime.harness;

import io.capsule.runtime.harness.contain.ContainmentConfig;
import java.time.Duration;
import java.util.Objects;

/**
 * The numbers the harness side needs, mapped by the run from {@code capsule.run.*} settings
 * (docs/run-semantics.md §3–§5). Kept as one small record so the harness classes do not depend on
 * the settings model.
 *
 * @param batchMaxLines most lines handed to the listener in one batch (spec default 256: large
 *     enough to amortise a driver call, small enough to keep one batch's latency low)
 * @param batchesInFlight stdout batches handed to the listener and not yet acknowledged, at least 1
 *     (settings default 2: the next batch is framed and waiting while one is parsed; memory stays
 *     bounded by this many batches)
 * @param lineCapBytes a stdout line longer than this is cut (spec default 8 MiB)
 * @param stderrTailBytes how much of stderr's end is kept for classify-exit (spec default 4096)
 * @param stderrDrainTimeout how long after the harness exits stderr may still be read before the
 *     exit is reported with the tail read so far (a grandchild may hold stderr open)
 * @param probeTimeout bound of the version probe and the login check (spec default 10 s)
 * @param ioDispatcher config path of the dispatcher for blocking process work (pipe reads, stdin
 *     writes, spawns, signals). Each live harness holds two of its threads for its whole life
 *     (stdout and stderr reads), and its stdin writes queue on the same pool, so the pool must be
 *     able to grow past twice the number of live harnesses (runtime-actors' {@code
 *     capsule.harness-io-dispatcher} does, up to 2048 threads made on demand). Pekko's default
 *     blocking dispatcher ({@link #DEFAULT_IO_DISPATCHER}, 16 threads) only serves a handful.
 * @param containment whether and how the harness runs in a sandbox ({@code capsule.harness.*}); off
 *     unless given: the settings' default ({@code auto}) is applied where settings are read
 */
public record HarnessLimits(
    int batchMaxLines,
    int batchesInFlight,
    int lineCapBytes,
    int stderrTailBytes,
    Duration stderrDrainTimeout,
    Duration probeTimeout,
    String ioDispatcher,
    ContainmentConfig containment) {

  /** Pekko's blocking-IO dispatcher; a dedicated, growing one is better for many runs. */
  public static final String DEFAULT_IO_DISPATCHER = "pekko.actor.default-blocking-io-dispatcher";

  /** {@code capsule.run.batches-in-flight}'s default (see {@code reference.conf} for why 2). */
  public static final int DEFAULT_BATCHES_IN_FLIGHT = 2;

  public HarnessLimits {
    if (batchMaxLines < 1) {
      throw new IllegalArgumentException("batchMaxLines must be at least 1");
    }
    if (batchesInFlight < 1) {
      throw new IllegalArgumentException("batchesInFlight must be at least 1");
    }
    if (lineCapBytes < 1) {
      throw new IllegalArgumentException("lineCapBytes must be at least 1");
    }
    if (stderrTailBytes < 1) {
      throw new IllegalArgumentException("stderrTailBytes must be at least 1");
    }
    Objects.requireNonNull(stderrDrainTimeout, "stderrDrainTimeout");
    Objects.requireNonNull(probeTimeout, "probeTimeout");
    Objects.requireNonNull(ioDispatcher, "ioDispatcher");
    Objects.requireNonNull(containment, "containment");
  }

  /** {@link #DEFAULT_BATCHES_IN_FLIGHT}, without containment (see the {@code with} methods). */
  public HarnessLimits(
      int batchMaxLines,
      int lineCapBytes,
      int stderrTailBytes,
      Duration stderrDrainTimeout,
      Duration probeTimeout,
      String ioDispatcher) {
    this(
        batchMaxLines,
        DEFAULT_BATCHES_IN_FLIGHT,
        lineCapBytes,
        stderrTailBytes,
        stderrDrainTimeout,
        probeTimeout,
        ioDispatcher,
        ContainmentConfig.off());
  }

  public HarnessLimits withContainment(ContainmentConfig value) {
    return new HarnessLimits(
        batchMaxLines,
        batchesInFlight,
        lineCapBytes,
        stderrTailBytes,
        stderrDrainTimeout,
        probeTimeout,
        ioDispatcher,
        value);
  }

  /** The spec's defaults; the stderr drain bound (not in the spec) is 2 s. */
  public static HarnessLimits defaults() {
    return new HarnessLimits(
        256,
        8 * 1024 * 1024,
        4096,
        Duration.ofSeconds(2),
        Duration.ofSeconds(10),
        DEFAULT_IO_DISPATCHER);
  }

  public HarnessLimits withBatchMaxLines(int value) {
    return new HarnessLimits(
        value,
        batchesInFlight,
        lineCapBytes,
        stderrTailBytes,
        stderrDrainTimeout,
        probeTimeout,
        ioDispatcher,
        containment);
  }

  public HarnessLimits withBatchesInFlight(int value) {
    return new HarnessLimits(
        batchMaxLines,
        value,
        lineCapBytes,
        stderrTailBytes,
        stderrDrainTimeout,
        probeTimeout,
        ioDispatcher,
        containment);
  }

  public HarnessLimits withLineCapBytes(int value) {
    return new HarnessLimits(
        batchMaxLines,
        batchesInFlight,
        value,
        stderrTailBytes,
        stderrDrainTimeout,
        probeTimeout,
        ioDispatcher,
        containment);
  }

  public HarnessLimits withStderrDrainTimeout(Duration value) {
    return new HarnessLimits(
        batchMaxLines,
        batchesInFlight,
        lineCapBytes,
        stderrTailBytes,
        value,
        probeTimeout,
        ioDispatcher,
        containment);
  }

  public HarnessLimits withProbeTimeout(Duration value) {
    return new HarnessLimits(
        batchMaxLines,
        batchesInFlight,
        lineCapBytes,
        stderrTailBytes,
        stderrDrainTimeout,
        value,
        ioDispatcher,
        containment);
  }

  public HarnessLimits withIoDispatcher(String value) {
    return new HarnessLimits(
        batchMaxLines,
        batchesInFlight,
        lineCapBytes,
        stderrTailBytes,
        stderrDrainTimeout,
        probeTimeout,
        value,
        containment);
  }
}
