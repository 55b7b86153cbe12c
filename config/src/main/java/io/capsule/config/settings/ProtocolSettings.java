package io.capsule.config.settings;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code capsule.protocol.*}: runner-protocol limits and timers. See {@code reference.conf} for
 * each default's reason.
 *
 * @param frameCapBytes largest frame accepted (larger: close 1009)
 * @param heartbeatIdle ping after this long without traffic
 * @param deadAfter no frame for this long = dead connection; longer than {@code heartbeatIdle}
 * @param helloTimeout no hello within this long: close 1008
 * @param replayBufferMaxFrames frames kept per task until known to have arrived
 * @param gapHoldMax out-of-order frames held per task
 * @param retention how long a finished task's frames stay replayable without acks
 * @param reconnect back-off between connection attempts
 * @param tokenClockSkew leeway on a token's exp and iat
 * @param liveness how a runner tells a silent hub from a quiet one
 */
public record ProtocolSettings(
    int frameCapBytes,
    Duration heartbeatIdle,
    Duration deadAfter,
    Duration helloTimeout,
    int replayBufferMaxFrames,
    int gapHoldMax,
    Duration retention,
    ProtocolSettings.Reconnect reconnect,
    Duration tokenClockSkew,
    ProtocolSettings.Liveness liveness) {

  /**
   * A runner pings its hub after each {@code pingInterval} in which the hub sent nothing, and gives
   * the connection up after {@code silenceLimit} without a frame (pongs included).
   */
  public record Liveness(Duration pingInterval, Duration silenceLimit) {
    public Liveness {
      Objects.requireNonNull(pingInterval, "pingInterval");
      Objects.requireNonNull(silenceLimit, "silenceLimit");
    }
  }

  /**
   * Exponential reconnect back-off from {@code minBackoff} to {@code maxBackoff}, each delay
   * multiplied by a random factor in {@code 1 ± jitter}.
   */
  public record Reconnect(Duration minBackoff, Duration maxBackoff, double jitter) {
    public Reconnect {
      Objects.requireNonNull(minBackoff, "minBackoff");
      Objects.requireNonNull(maxBackoff, "maxBackoff");
    }
  }

  public ProtocolSettings {
    Objects.requireNonNull(heartbeatIdle, "heartbeatIdle");
    Objects.requireNonNull(deadAfter, "deadAfter");
    Objects.requireNonNull(helloTimeout, "helloTimeout");
    Objects.requireNonNull(retention, "retention");
    Objects.requireNonNull(reconnect, "reconnect");
    Objects.requireNonNull(tokenClockSkew, "tokenClockSkew");
    Objects.requireNonNull(liveness, "liveness");
  }

  static ProtocolSettings read(SettingsReader r) {
    String p = "capsule.protocol.";
    int frameCap = (int) r.bytes(p + "frame-cap", 1024, Integer.MAX_VALUE - 8);
    Duration heartbeat = r.positive(p + "heartbeat-idle");
    Duration deadAfter = r.positive(p + "dead-after");
    if (deadAfter.compareTo(heartbeat) <= 0) {
      r.problem(
          p + "dead-after",
          "must be longer than "
              + p
              + "heartbeat-idle ("
              + SettingsReader.show(heartbeat)
              + "), got "
              + SettingsReader.show(deadAfter)
              + ": a connection would be declared dead before a ping could be answered");
    }
    Duration hello = r.positive(p + "hello-timeout");
    int replay = r.count(p + "replay-buffer-max-frames", 1, Integer.MAX_VALUE);
    int gapHold = r.count(p + "gap-hold-max", 0, Integer.MAX_VALUE);
    Duration retention = r.nonNegative(p + "retention");
    Duration min = r.positive(p + "reconnect.min-backoff");
    Duration max = r.positive(p + "reconnect.max-backoff");
    if (min.compareTo(max) > 0) {
      r.problem(
          p + "reconnect.min-backoff",
          "("
              + SettingsReader.show(min)
              + ") must not exceed "
              + p
              + "reconnect.max-backoff ("
              + SettingsReader.show(max)
              + ")");
    }
    double jitter = r.fraction(p + "reconnect.jitter");
    Duration skew = r.nonNegative(p + "token-clock-skew");
    Duration ping = r.positive(p + "liveness.ping-interval");
    Duration silence = r.positive(p + "liveness.silence-limit");
    if (silence.compareTo(ping) <= 0) {
      r.problem(
          p + "liveness.silence-limit",
          "must be longer than "
              + p
              + "liveness.ping-interval ("
              + SettingsReader.show(ping)
              + "), got "
              + SettingsReader.show(silence)
              + ": a hub would be given up before a ping could be answered");
    }
    return new ProtocolSettings(
        frameCap,
        heartbeat,
        deadAfter,
        hello,
        replay,
        gapHold,
        retention,
        new Reconnect(min, max, jitter),
        skew,
        new Liveness(ping, silence));
  }
}
