package io.capsule.config.settings;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code capsule.bridge.*}: the loopback tool bridge's limits. See {@code reference.conf} for each
 * default's reason.
 *
 * @param callTimeout how long one tool call may run
 * @param outputCapBytes tool output handed back is cut at this size
 * @param maxInFlight concurrent tool calls per run
 * @param maxConnections open connections per bridge
 * @param requestReadTimeout a request must arrive whole within this long
 * @param bodyCapBytes largest request body accepted
 */
public record BridgeSettings(
    Duration callTimeout,
    int outputCapBytes,
    int maxInFlight,
    int maxConnections,
    Duration requestReadTimeout,
    int bodyCapBytes) {

  public BridgeSettings {
    Objects.requireNonNull(callTimeout, "callTimeout");
    Objects.requireNonNull(requestReadTimeout, "requestReadTimeout");
  }

  static BridgeSettings read(SettingsReader r) {
    String p = "capsule.bridge.";
    return new BridgeSettings(
        r.positive(p + "call-timeout"),
        (int) r.bytes(p + "output-cap", 1, Integer.MAX_VALUE - 8),
        r.count(p + "max-in-flight", 1, Integer.MAX_VALUE),
        r.count(p + "max-connections", 1, Integer.MAX_VALUE),
        r.positive(p + "request-read-timeout"),
        (int) r.bytes(p + "body-cap", 1, Integer.MAX_VALUE - 8));
  }
}
