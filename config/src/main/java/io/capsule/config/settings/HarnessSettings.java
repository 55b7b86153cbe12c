package io.capsule.config.settings;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code capsule.harness.*}: whether and how the harness is contained (the manifest's network, path
 * and read-only grants enforced on the harness process itself). See {@code reference.conf} for each
 * default's reason.
 *
 * @param containment auto, required or off
 * @param bwrap the bubblewrap binary (a missing path simulates a machine without it)
 * @param socat the forwarder run inside the sandbox to reach the egress proxy
 * @param egressMaxConnections open connections per run's egress proxy
 * @param egressHeaderCapBytes largest request head the proxy reads
 * @param egressIdleTimeout a proxied connection with no bytes either way for this long is closed
 * @param egressConnectTimeout bound on resolving and connecting to an allowed host
 * @param resources the operator's bounds on a run's memory, processes, CPU and files
 */
public record HarnessSettings(
    Containment containment,
    String bwrap,
    String socat,
    int egressMaxConnections,
    int egressHeaderCapBytes,
    Duration egressIdleTimeout,
    Duration egressConnectTimeout,
    ResourceSettings resources) {

  /** The values of {@code capsule.harness.containment}. */
  public enum Containment {
    /** Contain when bubblewrap works here, else run uncontained with W-CAP-050. */
    AUTO,
    /** Contain, or refuse to start the harness (E-CAP-051). */
    REQUIRED,
    /** Never contain (the process-group kill is the only boundary). */
    OFF;

    /** The spelling in the setting. */
    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Optional<Containment> byName(String name) {
      return Arrays.stream(values()).filter(c -> c.configName().equals(name)).findFirst();
    }
  }

  public HarnessSettings {
    Objects.requireNonNull(containment, "containment");
    Objects.requireNonNull(bwrap, "bwrap");
    Objects.requireNonNull(socat, "socat");
    Objects.requireNonNull(egressIdleTimeout, "egressIdleTimeout");
    Objects.requireNonNull(egressConnectTimeout, "egressConnectTimeout");
    Objects.requireNonNull(resources, "resources");
  }

  /** Settings with the shipped resource bounds ({@link ResourceSettings#DEFAULTS}). */
  public HarnessSettings(
      Containment containment,
      String bwrap,
      String socat,
      int egressMaxConnections,
      int egressHeaderCapBytes,
      Duration egressIdleTimeout,
      Duration egressConnectTimeout) {
    this(
        containment,
        bwrap,
        socat,
        egressMaxConnections,
        egressHeaderCapBytes,
        egressIdleTimeout,
        egressConnectTimeout,
        ResourceSettings.DEFAULTS);
  }

  static HarnessSettings read(SettingsReader r) {
    String p = "capsule.harness.";
    String name = r.optionalText(p + "containment").orElse("");
    Optional<Containment> containment = Containment.byName(name);
    if (containment.isEmpty()) {
      r.problem(p + "containment", "must be auto, required or off (was '" + name + "')");
    }
    return new HarnessSettings(
        containment.orElse(Containment.AUTO),
        r.text(p + "bwrap"),
        r.text(p + "socat"),
        r.count(p + "egress.max-connections", 1, 4096),
        (int) r.bytes(p + "egress.header-cap", 1024, 1024 * 1024),
        r.positive(p + "egress.idle-timeout"),
        r.positive(p + "egress.connect-timeout"),
        ResourceSettings.read(r));
  }
}
