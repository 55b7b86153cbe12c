package io.capsule.runtime.javadsl;

import com.typesafe.config.Config;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.VersionProber;
import io.capsule.runtime.driver.DriverLoading;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How {@link CapsuleSharding} runs capsules over a cluster. The numbers come from {@code
 * capsule.sharding.*} and {@code capsule.run.max-concurrent} (see {@code reference.conf} for each
 * default's reason); the run limits and the driver loader are what a runner node's own runtime
 * uses.
 *
 * @param role only nodes with this cluster role host runs
 * @param limits every run's limits on a runner node
 * @param loading loads a folder capsule's driver on a runner node
 * @param prober the version prober; empty for the built-in process prober
 * @param maxConcurrent runs one node hosts at once (at least 1)
 * @param slotWait how long a start waits for a slot on its node
 * @param queueMax starts that may wait for a slot on one node
 * @param startTimeout how long a start may go unanswered by every runner node
 * @param startResend how often an unanswered start is repeated
 * @param handOffTimeout how long a leaving node's canceled run may take to end
 * @param numberOfShards shards of the run entity type
 */
public record CapsuleShardingSettings(
    String role,
    RunLimits limits,
    DriverLoading loading,
    Optional<VersionProber> prober,
    int maxConcurrent,
    Duration slotWait,
    int queueMax,
    Duration startTimeout,
    Duration startResend,
    Duration handOffTimeout,
    int numberOfShards) {

  public CapsuleShardingSettings {
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(loading, "loading");
    Objects.requireNonNull(prober, "prober");
    Objects.requireNonNull(slotWait, "slotWait");
    Objects.requireNonNull(startTimeout, "startTimeout");
    Objects.requireNonNull(startResend, "startResend");
    Objects.requireNonNull(handOffTimeout, "handOffTimeout");
    if (role.isBlank()) {
      throw new IllegalArgumentException("capsule.sharding.role must not be blank");
    }
    if (maxConcurrent < 1) {
      throw new IllegalArgumentException(
          "capsule.run.max-concurrent must be at least 1, got " + maxConcurrent);
    }
    if (queueMax < 0) {
      throw new IllegalArgumentException(
          "capsule.sharding.queue-max must be at least 0, got " + queueMax);
    }
    if (numberOfShards < 1) {
      throw new IllegalArgumentException(
          "capsule.sharding.number-of-shards must be at least 1, got " + numberOfShards);
    }
    if (startResend.isZero() || startResend.isNegative() || startTimeout.isNegative()) {
      throw new IllegalArgumentException("capsule.sharding start-resend must be positive");
    }
  }

  /** The settings of {@code config} ({@code capsule.sharding.*}, {@code capsule.run.*}). */
  public static CapsuleShardingSettings from(
      Config config, RunLimits limits, DriverLoading loading) {
    Config c = config.getConfig("capsule.sharding");
    return new CapsuleShardingSettings(
        c.getString("role"),
        limits,
        loading,
        Optional.empty(),
        config.getInt("capsule.run.max-concurrent"),
        c.getDuration("slot-wait"),
        c.getInt("queue-max"),
        c.getDuration("start-timeout"),
        c.getDuration("start-resend"),
        c.getDuration("hand-off-timeout"),
        c.getInt("number-of-shards"));
  }

  public CapsuleShardingSettings withRole(String r) {
    return new CapsuleShardingSettings(
        r,
        limits,
        loading,
        prober,
        maxConcurrent,
        slotWait,
        queueMax,
        startTimeout,
        startResend,
        handOffTimeout,
        numberOfShards);
  }

  public CapsuleShardingSettings withMaxConcurrent(int n) {
    return new CapsuleShardingSettings(
        role,
        limits,
        loading,
        prober,
        n,
        slotWait,
        queueMax,
        startTimeout,
        startResend,
        handOffTimeout,
        numberOfShards);
  }

  /** A start waits at most {@code wait} for a slot, behind at most {@code max} others. */
  public CapsuleShardingSettings withSlotWait(Duration wait, int max) {
    return new CapsuleShardingSettings(
        role,
        limits,
        loading,
        prober,
        maxConcurrent,
        wait,
        max,
        startTimeout,
        startResend,
        handOffTimeout,
        numberOfShards);
  }

  public CapsuleShardingSettings withStartTimeout(Duration timeout) {
    return new CapsuleShardingSettings(
        role,
        limits,
        loading,
        prober,
        maxConcurrent,
        slotWait,
        queueMax,
        timeout,
        startResend,
        handOffTimeout,
        numberOfShards);
  }

  public CapsuleShardingSettings withProber(VersionProber p) {
    return new CapsuleShardingSettings(
        role,
        limits,
        loading,
        Optional.of(p),
        maxConcurrent,
        slotWait,
        queueMax,
        startTimeout,
        startResend,
        handOffTimeout,
        numberOfShards);
  }
}
