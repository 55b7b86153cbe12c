package io.capsule.driver.engine;

import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * A store's epoch deadline, armed before each call into it, and set in the store again only when
 * the engine's epoch may have moved since it was last set. Why: setting it is a JNI call into
 * wasmtime-java (~350 ns measured, a third of an empty call's cost), made before every {@code
 * parse} batch, while the epoch moves once per {@link EpochTicker#TICK} (10 ms): thousands of calls
 * in a row would set the very same absolute deadline (the epoch when set, plus the ticks).
 *
 * <p>Why it is never early: the ticker counts its ticks ({@link EpochTicker#ticks()}) next to the
 * engine's epoch, and the two can differ by one tick at the moment they are read (the count is
 * advanced right after the epoch). So a deadline set while the count stood at {@code c} and still
 * in force while the count stands at {@code c} can be one tick nearer than at the moment it was
 * set; it is set one tick longer than {@link EpochTicker#ticks(java.time.Duration)} asks to cover
 * that. A deadline may fire up to one tick (10 ms) later than before; that is the ticker's
 * granularity already ("never early, about one tick late").
 *
 * <p>Not thread-safe: confined with its store.
 */
final class StoreDeadline {

  private final long ticks;
  private final LongSupplier epochTicks;
  private final LongConsumer setDeadline;
  private long armedAt = -1;

  /**
   * @param ticks the call deadline in ticks, as {@link EpochTicker#ticks(java.time.Duration)} gives
   * @param epochTicks the ticker's count of ticks, never going back
   * @param setDeadline sets the store's epoch deadline this many ticks from the engine's epoch now
   */
  StoreDeadline(long ticks, LongSupplier epochTicks, LongConsumer setDeadline) {
    this.ticks = ticks + 1;
    this.epochTicks = epochTicks;
    this.setDeadline = setDeadline;
  }

  /** Before a call into the store: its deadline at least the call deadline from now. */
  void arm() {
    long now = epochTicks.getAsLong();
    if (now != armedAt) {
      setDeadline.accept(ticks);
      armedAt = now;
    }
  }
}
