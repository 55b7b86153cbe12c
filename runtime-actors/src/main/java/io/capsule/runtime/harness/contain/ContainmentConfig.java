package io.capsule.runtime.harness.contain;

import io.capsule.config.settings.ResourceSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How the harness is contained, mapped from {@code capsule.harness.*} (the harness classes do not
 * depend on the settings model).
 *
 * @param mode auto, required or off
 * @param bwrap the bubblewrap binary
 * @param socat the forwarder started inside the sandbox
 * @param maxConnections open connections per run's egress proxy
 * @param headerCapBytes largest request head the proxy reads
 * @param idleTimeout a proxied connection idle this long (both ways) is closed; also bounds how
 *     long a request head may take to arrive
 * @param connectTimeout bound on resolving and connecting to an allowed host
 * @param resources {@code capsule.harness.resources}: each run's defaults and ceilings, and how
 *     they are enforced (docs/containment.md "Resources")
 */
public record ContainmentConfig(
    Mode mode,
    Path bwrap,
    Path socat,
    int maxConnections,
    int headerCapBytes,
    Duration idleTimeout,
    Duration connectTimeout,
    ResourceSettings resources) {

  /** {@code capsule.harness.containment}. */
  public enum Mode {
    AUTO,
    REQUIRED,
    OFF
  }

  /** With reference.conf's resource settings. */
  public ContainmentConfig(
      Mode mode,
      Path bwrap,
      Path socat,
      int maxConnections,
      int headerCapBytes,
      Duration idleTimeout,
      Duration connectTimeout) {
    this(
        mode,
        bwrap,
        socat,
        maxConnections,
        headerCapBytes,
        idleTimeout,
        connectTimeout,
        ResourceSettings.DEFAULTS);
  }

  public ContainmentConfig {
    Objects.requireNonNull(resources, "resources");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(bwrap, "bwrap");
    Objects.requireNonNull(socat, "socat");
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    if (maxConnections < 1) {
      throw new IllegalArgumentException("maxConnections must be at least 1");
    }
    if (headerCapBytes < 256) {
      throw new IllegalArgumentException("headerCapBytes must be at least 256");
    }
  }

  /** reference.conf's defaults with {@code mode}. */
  public static ContainmentConfig defaults(Mode mode) {
    return new ContainmentConfig(
        mode,
        Path.of("/usr/bin/bwrap"),
        Path.of("/usr/bin/socat"),
        64,
        16 * 1024,
        Duration.ofSeconds(300),
        Duration.ofSeconds(10));
  }

  /** No containment: what a bare {@code HarnessLimits} (an embedder's, a test's) has. */
  public static ContainmentConfig off() {
    return defaults(Mode.OFF);
  }

  public ContainmentConfig withMode(Mode value) {
    return new ContainmentConfig(
        value,
        bwrap,
        socat,
        maxConnections,
        headerCapBytes,
        idleTimeout,
        connectTimeout,
        resources);
  }

  public ContainmentConfig withBwrap(Path value) {
    return new ContainmentConfig(
        mode, value, socat, maxConnections, headerCapBytes, idleTimeout, connectTimeout, resources);
  }

  public ContainmentConfig withResources(ResourceSettings value) {
    return new ContainmentConfig(
        mode, bwrap, socat, maxConnections, headerCapBytes, idleTimeout, connectTimeout, value);
  }
}
