package io.capsule.runtime.bridge;

import io.capsule.config.settings.BridgeSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * The tool bridge's limits and identity. The run maps {@code capsule.bridge.*} settings onto this
 * record with {@link #from(BridgeSettings)}; {@link #defaults()} holds the same numbers as {@code
 * reference.conf} for tests and embedders without settings; an embedding application adds its
 * {@link ToolPolicy}.
 *
 * @param serverName the MCP server name the driver registers the bridge under (also reported as
 *     {@code serverInfo.name})
 * @param callTimeout how long one tool process may run before its process group is killed
 * @param outputCapBytes how many bytes of stdout plus stderr one call returns; the rest is read and
 *     dropped (the tool is not stopped by the cap, its timeout still bounds it)
 * @param maxInFlight tool calls running at once; one more is refused at once, never queued, so a
 *     runaway harness cannot pile up processes
 * @param maxConnections open HTTP connections; one harness needs a handful, 64 leaves room for
 *     clients that open one connection per request without letting a leak exhaust descriptors
 * @param requestReadTimeout time to receive a whole request body (a stalled client holds a
 *     connection at most this long before the tool runs)
 * @param bodyCapBytes largest request body; a tool call's arguments are small, 1 MiB leaves room
 *     for a generous {@code stdin}
 * @param policy the embedding application's last word on every call that passed the other gates
 */
public record BridgeConfig(
    String serverName,
    Duration callTimeout,
    int outputCapBytes,
    int maxInFlight,
    int maxConnections,
    Duration requestReadTimeout,
    int bodyCapBytes,
    ToolPolicy policy) {

  /** The server name drivers register; Murmur's process transport uses the same. */
  public static final String DEFAULT_SERVER_NAME = "murmur";

  public BridgeConfig {
    Objects.requireNonNull(serverName, "serverName");
    Objects.requireNonNull(callTimeout, "callTimeout");
    Objects.requireNonNull(requestReadTimeout, "requestReadTimeout");
    Objects.requireNonNull(policy, "policy");
    if (serverName.isBlank()) {
      throw new IllegalArgumentException("serverName must not be blank");
    }
    requirePositive(callTimeout, "callTimeout");
    requirePositive(requestReadTimeout, "requestReadTimeout");
    if (outputCapBytes < 1 || maxInFlight < 1 || maxConnections < 1 || bodyCapBytes < 1) {
      throw new IllegalArgumentException("bridge limits must be at least 1");
    }
  }

  /**
   * The defaults of {@code reference.conf}: 60 s per call (a repository-wide search fits, a hung
   * tool is killed long before the run's inactivity window), 1 MiB of output, 16 calls in flight,
   * 64 connections, 10 s to read a request, 1 MiB of body, every call allowed by policy.
   */
  public static BridgeConfig defaults() {
    return new BridgeConfig(
        DEFAULT_SERVER_NAME,
        Duration.ofSeconds(60),
        1 << 20,
        16,
        64,
        Duration.ofSeconds(10),
        1 << 20,
        ToolPolicy.ALLOW_ALL);
  }

  /** The runtime's {@code capsule.bridge.*} settings, default server name, allow-all policy. */
  public static BridgeConfig from(BridgeSettings settings) {
    return new BridgeConfig(
        DEFAULT_SERVER_NAME,
        settings.callTimeout(),
        settings.outputCapBytes(),
        settings.maxInFlight(),
        settings.maxConnections(),
        settings.requestReadTimeout(),
        settings.bodyCapBytes(),
        ToolPolicy.ALLOW_ALL);
  }

  public BridgeConfig withServerName(String name) {
    return new BridgeConfig(
        name,
        callTimeout,
        outputCapBytes,
        maxInFlight,
        maxConnections,
        requestReadTimeout,
        bodyCapBytes,
        policy);
  }

  public BridgeConfig withCallTimeout(Duration timeout) {
    return new BridgeConfig(
        serverName,
        timeout,
        outputCapBytes,
        maxInFlight,
        maxConnections,
        requestReadTimeout,
        bodyCapBytes,
        policy);
  }

  public BridgeConfig withOutputCapBytes(int cap) {
    return new BridgeConfig(
        serverName,
        callTimeout,
        cap,
        maxInFlight,
        maxConnections,
        requestReadTimeout,
        bodyCapBytes,
        policy);
  }

  public BridgeConfig withMaxInFlight(int max) {
    return new BridgeConfig(
        serverName,
        callTimeout,
        outputCapBytes,
        max,
        maxConnections,
        requestReadTimeout,
        bodyCapBytes,
        policy);
  }

  public BridgeConfig withMaxConnections(int max) {
    return new BridgeConfig(
        serverName,
        callTimeout,
        outputCapBytes,
        maxInFlight,
        max,
        requestReadTimeout,
        bodyCapBytes,
        policy);
  }

  public BridgeConfig withRequestReadTimeout(Duration timeout) {
    return new BridgeConfig(
        serverName,
        callTimeout,
        outputCapBytes,
        maxInFlight,
        maxConnections,
        timeout,
        bodyCapBytes,
        policy);
  }

  public BridgeConfig withBodyCapBytes(int cap) {
    return new BridgeConfig(
        serverName,
        callTimeout,
        outputCapBytes,
        maxInFlight,
        maxConnections,
        requestReadTimeout,
        cap,
        policy);
  }

  public BridgeConfig withPolicy(ToolPolicy toolPolicy) {
    return new BridgeConfig(
        serverName,
        callTimeout,
        outputCapBytes,
        maxInFlight,
        maxConnections,
        requestReadTimeout,
        bodyCapBytes,
        toolPolicy);
  }

  private static void requirePositive(Duration d, String name) {
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive");
    }
  }
}
