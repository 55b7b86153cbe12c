package io.capsule.driver.engine;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Call deadlines for Chicory: its compiled code checks {@link Thread#isInterrupted()} at function
 * entries and loop back-edges and throws {@code ChicoryInterruptedException}, so a deadline is the
 * calling thread being interrupted if, and only if, that call is still running past it.
 *
 * <p>Like wasmtime's epoch, one daemon thread ticks every {@link #TICK} over the {@link Slot}s of
 * live instances and interrupts the overdue ones. Arming a call is a few field writes under the
 * slot's own lock, not a scheduled task per call: a {@code parse} of N lines makes N+1 {@code
 * cabi_realloc} calls, each bounded too.
 *
 * <p>Thread-safe. An interrupt from anyone else (a dispatcher shutting down) is told apart by
 * {@link Slot#end()} and kept.
 */
final class CallWatchdog implements AutoCloseable {

  /** As for wasmtime's epoch: a deadline fires at most one tick late. */
  static final Duration TICK = Duration.ofMillis(10);

  private final Set<Slot> slots = ConcurrentHashMap.newKeySet();
  private ScheduledExecutorService timer;
  private boolean closed;

  /** One instance's deadline state; calls on it never overlap (the instance is confined). */
  static final class Slot {
    private Thread caller;
    private long deadlineNanos;
    private boolean running;
    private boolean fired;

    synchronized void start(Duration deadline) {
      caller = Thread.currentThread();
      deadlineNanos = System.nanoTime() + deadline.toNanos();
      running = true;
      fired = false;
    }

    /**
     * Ends the call's watch and says whether its deadline fired. Idempotent. When it fired, the
     * interrupt it caused is cleared, so the thread goes back to its pool clean.
     */
    boolean end() {
      boolean wasFired;
      synchronized (this) {
        running = false;
        wasFired = fired;
        fired = false;
      }
      if (wasFired) {
        Thread.interrupted();
      }
      return wasFired;
    }

    private synchronized void expireIf(long now) {
      if (running && !fired && now - deadlineNanos >= 0) {
        fired = true;
        caller.interrupt();
      }
    }
  }

  /** A slot for a new instance; {@link #unregister} it when the instance closes. */
  synchronized Slot register() {
    if (closed) {
      throw new IllegalStateException("the chicory engine is closed");
    }
    if (timer == null) {
      timer =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "capsule-chicory-deadline");
                t.setDaemon(true);
                return t;
              });
      long period = TICK.toNanos();
      timer.scheduleAtFixedRate(this::tick, period, period, TimeUnit.NANOSECONDS);
    }
    Slot slot = new Slot();
    slots.add(slot);
    return slot;
  }

  void unregister(Slot slot) {
    slots.remove(slot);
  }

  private void tick() {
    long now = System.nanoTime();
    for (Slot slot : slots) {
      slot.expireIf(now);
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (timer != null) {
      timer.shutdownNow();
      timer = null;
    }
    slots.clear();
  }
}
