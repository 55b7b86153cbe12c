package io.capsule.driver.engine;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Call deadlines for Chicory: its compiled code checks {@link Thread#isInterrupted()} at function
 * entries and loop back-edges and throws {@code ChicoryInterruptedException}, so a deadline is a
 * timer that interrupts the calling thread if, and only if, that call is still running.
 *
 * <p>Thread-safe; one daemon timer thread per engine. An interrupt from anyone else (a dispatcher
 * shutting down) is told apart by {@link Armed#fired()} and kept.
 */
final class CallWatchdog implements AutoCloseable {

  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "capsule-chicory-deadline");
            t.setDaemon(true);
            return t;
          });

  /** One armed deadline; {@link #disarm()} it in a {@code finally} right after the call. */
  static final class Armed {
    private final Thread caller;
    private ScheduledFuture<?> future;
    private boolean running = true;
    private boolean fired;

    private Armed(Thread caller) {
      this.caller = caller;
    }

    private synchronized void fire() {
      if (running) {
        fired = true;
        caller.interrupt();
      }
    }

    /**
     * Ends the watch. When the deadline fired, the interrupt it caused is cleared so the thread
     * goes back to its pool clean.
     */
    void disarm() {
      synchronized (this) {
        running = false;
        if (future != null) {
          future.cancel(false);
        }
      }
      if (fired()) {
        Thread.interrupted();
      }
    }

    synchronized boolean fired() {
      return fired;
    }
  }

  Armed arm(Duration deadline) {
    Armed armed = new Armed(Thread.currentThread());
    ScheduledFuture<?> f = timer.schedule(armed::fire, deadline.toNanos(), TimeUnit.NANOSECONDS);
    synchronized (armed) {
      armed.future = f;
    }
    return armed;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
