package io.capsule.protocol.ws;

import java.time.Duration;

/**
 * Whether a runner's hub connection is still alive, judged on the runner's side: a pure decision
 * over ticks of one interval, with no clock of its own (the client's timer drives {@link #tick()},
 * so an actor test moves it with {@code ManualTime}).
 *
 * <p>The rules, in order, at each tick ({@code docs/runner-protocol.md}, "Liveness"):
 *
 * <ol>
 *   <li>something came from the hub since the last tick: the connection is alive, nothing to send;
 *   <li>nothing came for {@code silenceLimit} (counted in whole ticks): the connection is dead;
 *   <li>otherwise: send a {@code ping}, whose {@code pong} counts as something that came.
 * </ol>
 *
 * A connection is thus declared dead after at least {@code silenceLimit} of silence and less than
 * {@code silenceLimit + pingInterval} (the ticks' phase against the last frame heard), and costs at
 * most one ping per interval, none while the hub talks. A pong that comes late, but before the
 * limit, keeps the connection.
 *
 * <p>Not thread-safe: owned by the client's actor.
 */
public final class Liveness {
  /** What the owner does at a tick. */
  public enum Verdict {
    /** The hub spoke since the last tick. */
    ALIVE,
    /** Silent for less than the limit: ping it. */
    PING,
    /** Silent for the limit: give the connection up and dial the next hub URL. */
    DEAD
  }

  private final int silentTicksAllowed;
  private boolean heard;
  private int silentTicks;

  /**
   * @param pingInterval the tick's period
   * @param silenceLimit silence that makes the connection dead; longer than {@code pingInterval}
   */
  public Liveness(Duration pingInterval, Duration silenceLimit) {
    if (pingInterval.isZero() || pingInterval.isNegative()) {
      throw new IllegalArgumentException("pingInterval must be positive");
    }
    if (silenceLimit.compareTo(pingInterval) <= 0) {
      throw new IllegalArgumentException("silenceLimit must be longer than pingInterval");
    }
    long n = pingInterval.toNanos();
    long ticks = (silenceLimit.toNanos() + n - 1) / n; // whole ticks covering the limit
    this.silentTicksAllowed = (int) Math.min(Integer.MAX_VALUE, ticks);
  }

  /** Something came from the hub (any frame). */
  public void heard() {
    heard = true;
  }

  /** One interval passed. */
  public Verdict tick() {
    if (heard) {
      heard = false;
      silentTicks = 0;
      return Verdict.ALIVE;
    }
    silentTicks++;
    return silentTicks >= silentTicksAllowed ? Verdict.DEAD : Verdict.PING;
  }
}
