package io.capsule.hub;

import java.time.Duration;
import java.util.function.Predicate;

/**
 * Waits for a fact outside the test's own actors: a server's HTTP answer, a probe's cached verdict.
 * There is no message to wait on there, so it polls, with a short pause that grows to a cap, and
 * fails with {@code what} and the last value seen once the bound has passed. Actors are awaited
 * with probes and manual time, never with this.
 */
public final class Await {
  private static final long FIRST_PAUSE_MS = 20;
  private static final long MAX_PAUSE_MS = 200;

  /** One look at the fact; may throw (a refused connection is a "not yet"). */
  @FunctionalInterface
  public interface Look<T> {
    T get() throws Exception;
  }

  private Await() {}

  /**
   * Looks until {@code ok} accepts what it sees and returns that; throws an {@link AssertionError}
   * naming {@code what} and the last value (or failure) after {@code within}.
   */
  public static <T> T until(Look<T> look, Predicate<T> ok, Duration within, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    long pause = FIRST_PAUSE_MS;
    Object last = null;
    while (true) {
      try {
        T seen = look.get();
        if (ok.test(seen)) {
          return seen;
        }
        last = seen;
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        last = e;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + within + ": " + what + "; last: " + last);
      }
      Thread.sleep(pause); // the one pause between looks at an outside fact
      pause = Math.min(MAX_PAUSE_MS, pause * 2);
    }
  }
}
