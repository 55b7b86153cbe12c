package io.capsule.cli;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits for a fact outside the test's own actors: a process, a server's answer, a meter another
 * system moves, a log line. There is no probe or message to wait on there, so it polls, with a
 * short pause that grows to a cap, and fails with {@code what} once the bound has passed. Tests of
 * actors wait on probes and manual time, never on this.
 */
final class Await {
  private static final long FIRST_PAUSE_MS = 20;
  private static final long MAX_PAUSE_MS = 200;

  private Await() {}

  /**
   * Returns once {@code condition} holds; throws an {@link AssertionError} after {@code within}.
   */
  static void until(BooleanSupplier condition, Duration within, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    long pause = FIRST_PAUSE_MS;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + within + ": " + what);
      }
      Thread.sleep(pause); // the one pause between polls of an outside fact
      pause = Math.min(MAX_PAUSE_MS, pause * 2);
    }
  }
}
