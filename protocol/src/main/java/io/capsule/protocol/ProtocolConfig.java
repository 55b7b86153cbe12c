package io.capsule.protocol;

import java.time.Duration;
import java.util.Objects;

/**
 * The runner protocol's settings, independent of how the embedding application reads its
 * configuration (the runtime maps {@code capsule.protocol.*} onto this record).
 *
 * @param frameCapBytes largest text frame accepted; a bigger one closes the socket with 1009
 * @param heartbeatIdle a side pings after this long without sending anything
 * @param deadAfter no inbound frame for this long means the connection is dead
 * @param helloTimeout the hub closes with 1008 when no {@code hello} arrives within this
 * @param replayBufferBound most frames a sender holds for replay (all tasks together); overflow is
 *     {@code E-PRO-006}
 * @param holdBound most out-of-order frames a receiver holds per task while it waits for a gap to
 *     fill; beyond that it drops them (the sender's replay brings them again in order)
 * @param finishedRetention how many finished tasks a receiver still remembers, so a late replay of
 *     a finished task's frames is dropped as duplicate instead of applied again
 * @param ackEvery the hub acks a runner after this many applied frames (and at every report)
 * @param backoffMin first reconnect delay
 * @param backoffMax reconnect delays double up to this
 * @param backoffJitter random extra fraction of each delay (0.2 = up to +20 %)
 * @param tokenClockSkew tolerance when checking a token's {@code exp} and {@code iat}
 * @param outboundQueue socket-side write queue per connection (frames); writes wait when full
 * @param heldBytesBudget most bytes of out-of-order frames a hub holds for one runner, over all its
 *     tasks; past it the hub drops them and closes the connection (the runner replays them)
 * @param pingInterval a runner pings its hub after each such interval in which the hub sent nothing
 *     ({@link io.capsule.protocol.ws.Liveness})
 * @param silenceLimit a runner that heard nothing from its hub for this long (pongs included) gives
 *     the connection up and dials the next hub URL; longer than {@code pingInterval}
 */
public record ProtocolConfig(
    int frameCapBytes,
    Duration heartbeatIdle,
    Duration deadAfter,
    Duration helloTimeout,
    int replayBufferBound,
    int holdBound,
    int finishedRetention,
    int ackEvery,
    Duration backoffMin,
    Duration backoffMax,
    double backoffJitter,
    Duration tokenClockSkew,
    int outboundQueue,
    long heldBytesBudget,
    Duration pingInterval,
    Duration silenceLimit) {

  /** 1 MiB: the spec's frame cap. */
  public static final int DEFAULT_FRAME_CAP = 1 << 20;

  public ProtocolConfig {
    Objects.requireNonNull(heartbeatIdle, "heartbeatIdle");
    Objects.requireNonNull(deadAfter, "deadAfter");
    Objects.requireNonNull(helloTimeout, "helloTimeout");
    Objects.requireNonNull(backoffMin, "backoffMin");
    Objects.requireNonNull(backoffMax, "backoffMax");
    Objects.requireNonNull(tokenClockSkew, "tokenClockSkew");
    Objects.requireNonNull(pingInterval, "pingInterval");
    Objects.requireNonNull(silenceLimit, "silenceLimit");
    positive("frameCapBytes", frameCapBytes);
    positive("replayBufferBound", replayBufferBound);
    positive("holdBound", holdBound);
    positive("finishedRetention", finishedRetention);
    positive("ackEvery", ackEvery);
    positive("outboundQueue", outboundQueue);
    if (heldBytesBudget < frameCapBytes) {
      throw new IllegalArgumentException("heldBytesBudget must hold at least one frame");
    }
    if (deadAfter.compareTo(heartbeatIdle) <= 0) {
      throw new IllegalArgumentException("deadAfter must be longer than heartbeatIdle");
    }
    if (pingInterval.isZero() || pingInterval.isNegative()) {
      throw new IllegalArgumentException("pingInterval must be positive");
    }
    if (silenceLimit.compareTo(pingInterval) <= 0) {
      throw new IllegalArgumentException("silenceLimit must be longer than pingInterval");
    }
    if (backoffMax.compareTo(backoffMin) < 0) {
      throw new IllegalArgumentException("backoffMax must not be shorter than backoffMin");
    }
    if (backoffJitter < 0 || backoffJitter > 1) {
      throw new IllegalArgumentException("backoffJitter must be within [0, 1]");
    }
  }

  /** The spec's defaults: 1 MiB, ping after 15 s, dead after 45 s, hello within 10 s. */
  public static ProtocolConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder()
        .frameCapBytes(frameCapBytes)
        .heartbeatIdle(heartbeatIdle)
        .deadAfter(deadAfter)
        .helloTimeout(helloTimeout)
        .replayBufferBound(replayBufferBound)
        .holdBound(holdBound)
        .finishedRetention(finishedRetention)
        .ackEvery(ackEvery)
        .backoffMin(backoffMin)
        .backoffMax(backoffMax)
        .backoffJitter(backoffJitter)
        .tokenClockSkew(tokenClockSkew)
        .outboundQueue(outboundQueue)
        .heldBytesBudget(heldBytesBudget)
        .pingInterval(pingInterval)
        .silenceLimit(silenceLimit);
  }

  private static void positive(String name, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " must be positive, was " + value);
    }
  }

  /** Builder starting from the defaults. */
  public static final class Builder {
    private int frameCapBytes = DEFAULT_FRAME_CAP;
    private Duration heartbeatIdle = Duration.ofSeconds(15);
    private Duration deadAfter = Duration.ofSeconds(45);
    private Duration helloTimeout = Duration.ofSeconds(10);
    // 64 Ki frames of ~0.5 KiB is ~32 MiB at worst: enough for minutes of progress while the hub
    // is unreachable, small enough that a runaway task is noticed.
    private int replayBufferBound = 65_536;
    private int holdBound = 1_024;

    /**
     * 64 MiB: 64 frames at the cap, far more than a healthy runner's reordering (it sends in order;
     * only a reconnect's replay can arrive around a gap), and a small slice of a hub heap even with
     * a hundred runners misbehaving at once.
     */
    private long heldBytesBudget = 64L << 20;

    private int finishedRetention = 10_000;
    // Acking every 64 frames keeps the runner's buffer short without doubling the frame count.
    private int ackEvery = 64;
    private Duration backoffMin = Duration.ofMillis(500);
    private Duration backoffMax = Duration.ofSeconds(30);
    private double backoffJitter = 0.2;
    private Duration tokenClockSkew = Duration.ofSeconds(30);
    private int outboundQueue = 256;

    // A ping a second costs a ~60-byte frame per idle second; 3 s of silence (declared dead within
    // 3-4 s) is past the hub cluster's own verdict on a silent node (heartbeat-pause 2 s: it is
    // unreachable ~2.5-3 s after its last heartbeat), so a runner leaves a node about when its
    // peers give up on it, and a failover still fits in 10 s (docs/settings.md, "Runner liveness").
    private Duration pingInterval = Duration.ofSeconds(1);
    private Duration silenceLimit = Duration.ofSeconds(3);

    private Builder() {}

    public Builder pingInterval(Duration v) {
      pingInterval = v;
      return this;
    }

    public Builder silenceLimit(Duration v) {
      silenceLimit = v;
      return this;
    }

    public Builder frameCapBytes(int v) {
      frameCapBytes = v;
      return this;
    }

    public Builder heartbeatIdle(Duration v) {
      heartbeatIdle = v;
      return this;
    }

    public Builder deadAfter(Duration v) {
      deadAfter = v;
      return this;
    }

    public Builder helloTimeout(Duration v) {
      helloTimeout = v;
      return this;
    }

    public Builder replayBufferBound(int v) {
      replayBufferBound = v;
      return this;
    }

    public Builder heldBytesBudget(long v) {
      heldBytesBudget = v;
      return this;
    }

    public Builder holdBound(int v) {
      holdBound = v;
      return this;
    }

    public Builder finishedRetention(int v) {
      finishedRetention = v;
      return this;
    }

    public Builder ackEvery(int v) {
      ackEvery = v;
      return this;
    }

    public Builder backoffMin(Duration v) {
      backoffMin = v;
      return this;
    }

    public Builder backoffMax(Duration v) {
      backoffMax = v;
      return this;
    }

    public Builder backoffJitter(double v) {
      backoffJitter = v;
      return this;
    }

    public Builder tokenClockSkew(Duration v) {
      tokenClockSkew = v;
      return this;
    }

    public Builder outboundQueue(int v) {
      outboundQueue = v;
      return this;
    }

    public ProtocolConfig build() {
      return new ProtocolConfig(
          frameCapBytes,
          heartbeatIdle,
          deadAfter,
          helloTimeout,
          replayBufferBound,
          holdBound,
          finishedRetention,
          ackEvery,
          backoffMin,
          backoffMax,
          backoffJitter,
          tokenClockSkew,
          outboundQueue,
          heldBytesBudget,
          pingInterval,
          silenceLimit);
    }
  }
}
