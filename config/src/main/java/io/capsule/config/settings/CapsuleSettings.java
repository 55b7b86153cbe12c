package io.capsule.config.settings;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Map;
import java.util.Objects;

/**
 * The runtime's own settings, read once from {@code capsule.*} of a Typesafe/Pekko {@link Config}
 * and checked whole: a bad value fails at startup with {@link SettingsInvalid} (E-CFG-001 naming
 * each key), never later in a run; so do a key no {@code reference.conf} defines (E-CFG-002, with
 * the closest known key) and a duration without a unit (E-CFG-003), see {@link SettingsShape}.
 *
 * <pre>{@code
 * CapsuleSettings settings = CapsuleSettings.from(system.settings().config());
 * CapsuleSettings fast = settings.withOverrides(Map.of("capsule.run.terminal-grace", "100ms"));
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class CapsuleSettings {

  private final Config config;
  private final RunSettings run;
  private final DriverSettings driver;
  private final ProtocolSettings protocol;
  private final HubSettings hub;
  private final BridgeSettings bridge;
  private final HarnessSettings harness;

  private CapsuleSettings(Config config) {
    this.config = config;
    SettingsReader reader = new SettingsReader(config);
    this.run = RunSettings.read(reader);
    this.driver = DriverSettings.read(reader);
    this.protocol = ProtocolSettings.read(reader);
    this.hub = HubSettings.read(reader);
    this.bridge = BridgeSettings.read(reader);
    this.harness = HarnessSettings.read(reader);
    reader.problems(SettingsShape.check(config, reference()));
    reader.finish();
  }

  /**
   * Reads {@code capsule.*} from {@code config}; keys it lacks come from this module's {@code
   * reference.conf}, so a partial config (a test's few overrides) is enough.
   *
   * @throws SettingsInvalid naming every bad key
   */
  public static CapsuleSettings from(Config config) {
    Objects.requireNonNull(config, "config");
    return new CapsuleSettings(config.withFallback(reference()).resolve());
  }

  /**
   * Reads the standard stack: {@code -D} system properties, {@code application.conf}, {@code
   * reference.conf} (Typesafe Config's {@code ConfigFactory.load()}).
   */
  public static CapsuleSettings load() {
    return from(ConfigFactory.load(CapsuleSettings.class.getClassLoader()));
  }

  /** Every documented default. */
  public static CapsuleSettings defaults() {
    return from(reference());
  }

  /**
   * A copy with some keys replaced, e.g. {@code Map.of("capsule.run.inactivity-timeout", "2s")}:
   * full paths, values as HOCON would write them. The map is plain strings so it can travel in a
   * serializable start message.
   *
   * @throws SettingsInvalid naming every bad key
   */
  public CapsuleSettings withOverrides(Map<String, ?> overrides) {
    return new CapsuleSettings(ConfigFactory.parseMap(overrides).withFallback(config).resolve());
  }

  /** A copy with the settings of a HOCON snippet on top, e.g. {@code "capsule.run.trace = off"}. */
  public CapsuleSettings withOverrides(String hocon) {
    return new CapsuleSettings(ConfigFactory.parseString(hocon).withFallback(config).resolve());
  }

  public RunSettings run() {
    return run;
  }

  public DriverSettings driver() {
    return driver;
  }

  public ProtocolSettings protocol() {
    return protocol;
  }

  public HubSettings hub() {
    return hub;
  }

  public BridgeSettings bridge() {
    return bridge;
  }

  public HarnessSettings harness() {
    return harness;
  }

  /** The whole config these settings were read from (for settings owned by other modules). */
  public Config config() {
    return config;
  }

  private static Config reference() {
    return ConfigFactory.defaultReference(CapsuleSettings.class.getClassLoader());
  }

  @Override
  public String toString() {
    return "CapsuleSettings["
        + "run="
        + run
        + ", driver="
        + driver
        + ", protocol="
        + protocol
        + ", hub="
        + hub
        + ", bridge="
        + bridge
        + ", harness="
        + harness
        + "]";
  }
}
