package io.capsule.driver.engine;

import io.github.kawamuray.wasmtime.Engine;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Advances a wasmtime engine's epoch every {@link #TICK}, from one daemon thread shared by every
 * store of that engine, so each store's epoch deadline (set in ticks before each call) turns into
 * wall-clock time. A running guest checks the epoch at function entries and loop back-edges and
 * traps once its deadline has passed; the store stays usable.
 *
 * <p>Thread-safe. Started on first use, stopped by {@link #close()}.
 */
final class EpochTicker implements AutoCloseable {

  /**
   * 10 ms: deadlines are 30 s by default and tests use a few hundred ms, so a deadline fires about
   * one tick late (never early; later when the ticker thread is starved of CPU); a faster tick
   * would cost wake-ups for no one's benefit.
   */
  static final Duration TICK = Duration.ofMillis(10);

  private final Engine engine;

  /** The ticks so far, advanced right after each increment of the engine's epoch. */
  private volatile long ticks;

  private ScheduledExecutorService timer;
  private boolean closed;

  EpochTicker(Engine engine) {
    this.engine = engine;
  }

  /** The deadline in ticks: rounded up, plus one for the partial tick already under way. */
  static long ticks(Duration deadline) {
    long tick = TICK.toNanos();
    return Math.max(1, (deadline.toNanos() + tick - 1) / tick) + 1;
  }

  synchronized void ensureStarted() {
    if (closed) {
      throw new IllegalStateException("the wasmtime engine is closed");
    }
    if (timer == null) {
      timer =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "capsule-wasmtime-epoch");
                t.setDaemon(true);
                return t;
              });
      long period = TICK.toNanos();
      // Fixed delay, not fixed rate: after the ticker thread was starved, a fixed rate would fire
      // the missed ticks back to back and end deadlines set during the stall early. With a fixed
      // delay the epoch never runs ahead of the wall clock: a deadline may fire late, never early.
      timer.scheduleWithFixedDelay(this::tick, period, period, TimeUnit.NANOSECONDS);
    }
  }

  private void tick() {
    engine.incrementEpoch();
    ticks++; // one writer, this thread: the volatile write publishes it
  }

  /**
   * How many times the epoch was advanced: one behind the engine's epoch at most while a tick is
   * under way ({@link StoreDeadline} relies on this).
   */
  long ticks() {
    return ticks;
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (timer != null) {
      timer.shutdownNow();
      try {
        timer.awaitTermination(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      timer = null;
    }
  }
}
