package io.capsule.config.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Runtime settings: documented defaults, overrides, and every kind of bad value. */
class CapsuleSettingsTest {

  static final CapsuleSettings DEFAULTS = CapsuleSettings.defaults();

  static Stream<Arguments> documentedDefaults() {
    return Stream.of(
        def(
            "run.version-probe-timeout",
            s -> s.run().versionProbeTimeout(),
            Duration.ofSeconds(10)),
        def("run.driver-call-timeout", s -> s.run().driverCallTimeout(), Duration.ofSeconds(30)),
        def("run.inactivity-timeout", s -> s.run().inactivityTimeout(), Duration.ofSeconds(600)),
        def("run.terminal-grace", s -> s.run().terminalGrace(), Duration.ofSeconds(3)),
        def("run.interrupt-grace", s -> s.run().interruptGrace(), Duration.ofSeconds(10)),
        def("run.stderr-tail-bytes", s -> s.run().stderrTailBytes(), 4096),
        def("run.batch-max-lines", s -> s.run().batchMaxLines(), 256),
        def("run.batches-in-flight", s -> s.run().batchesInFlight(), 2),
        def("run.line-cap-bytes", s -> s.run().lineCapBytes(), 8 * 1024 * 1024),
        def("run.stderr-drain-timeout", s -> s.run().stderrDrainTimeout(), Duration.ofSeconds(2)),
        def("run.trace", s -> s.run().trace(), true),
        def("driver.memory-cap", s -> s.driver().memoryCapBytes(), 64L * 1024 * 1024),
        def("driver.memory-cap in pages", s -> s.driver().memoryCapPages(), 1024L),
        def("driver.engine", s -> s.driver().engine(), DriverSettings.Engine.WASMTIME),
        def("hub.url", s -> s.hub().url(), Optional.empty()),
        def("hub.token-file", s -> s.hub().tokenFile(), Optional.empty()),
        def("hub.project-id", s -> s.hub().projectId(), Optional.empty()),
        def("protocol.frame-cap", s -> s.protocol().frameCapBytes(), 1024 * 1024),
        def("protocol.heartbeat-idle", s -> s.protocol().heartbeatIdle(), Duration.ofSeconds(15)),
        def("protocol.dead-after", s -> s.protocol().deadAfter(), Duration.ofSeconds(45)),
        def("protocol.hello-timeout", s -> s.protocol().helloTimeout(), Duration.ofSeconds(10)),
        def(
            "protocol.replay-buffer-max-frames",
            s -> s.protocol().replayBufferMaxFrames(),
            100_000),
        def("protocol.gap-hold-max", s -> s.protocol().gapHoldMax(), 1024),
        def("protocol.retention", s -> s.protocol().retention(), Duration.ofMinutes(10)),
        def(
            "protocol.reconnect",
            s -> s.protocol().reconnect(),
            new ProtocolSettings.Reconnect(Duration.ofMillis(200), Duration.ofSeconds(30), 0.2)),
        def(
            "protocol.token-clock-skew",
            s -> s.protocol().tokenClockSkew(),
            Duration.ofSeconds(30)),
        def(
            "protocol.liveness",
            s -> s.protocol().liveness(),
            new ProtocolSettings.Liveness(Duration.ofSeconds(1), Duration.ofSeconds(3))),
        def("bridge.call-timeout", s -> s.bridge().callTimeout(), Duration.ofSeconds(60)),
        def("bridge.output-cap", s -> s.bridge().outputCapBytes(), 1024 * 1024),
        def("bridge.max-in-flight", s -> s.bridge().maxInFlight(), 16),
        def("bridge.max-connections", s -> s.bridge().maxConnections(), 64),
        def(
            "bridge.request-read-timeout",
            s -> s.bridge().requestReadTimeout(),
            Duration.ofSeconds(10)),
        def("bridge.body-cap", s -> s.bridge().bodyCapBytes(), 1024 * 1024),
        def(
            "harness.resources.mechanism",
            s -> s.harness().resources().mechanism(),
            ResourceSettings.Mechanism.AUTO),
        def("harness.resources.memory", s -> s.harness().resources().memory(), 4L << 30),
        def("harness.resources.memory-max", s -> s.harness().resources().memoryMax(), 16L << 30),
        def("harness.resources.processes", s -> s.harness().resources().processes(), 512),
        def("harness.resources.processes-max", s -> s.harness().resources().processesMax(), 4096),
        def("harness.resources.cpu", s -> s.harness().resources().cpu(), 0.0),
        def("harness.resources.cpu-max", s -> s.harness().resources().cpuMax(), 0.0),
        def("harness.resources.file-size", s -> s.harness().resources().fileSize(), 1L << 30),
        def(
            "harness.resources.file-size-max",
            s -> s.harness().resources().fileSizeMax(),
            8L << 30),
        def("harness.resources.open-files", s -> s.harness().resources().openFiles(), 4096),
        def("harness.resources.open-files-max", s -> s.harness().resources().openFilesMax(), 65536),
        def(
            "harness.resources (the record)",
            s -> s.harness().resources(),
            ResourceSettings.DEFAULTS));
  }

  private static Arguments def(String key, Function<CapsuleSettings, Object> read, Object value) {
    return Arguments.of(key, read, value);
  }

  @ParameterizedTest(name = "capsule.{0}")
  @MethodSource("documentedDefaults")
  void defaultsAreTheDocumentedValues(
      String key, Function<CapsuleSettings, Object> read, Object expected) {
    assertEquals(expected, read.apply(DEFAULTS));
  }

  /** Under /tmp (the old default) Gemini CLI ignored the settings file the driver writes. */
  @Test
  void runDirectoriesGoToAPrivateStateFolderByDefaultNotBelowTheTempDir() {
    Path root = DEFAULTS.run().workRoot();
    assertEquals(
        RunSettings.privateWorkRoot(System.getenv(), System.getProperty("user.home")), root);
    assertFalse(
        root.startsWith(Path.of(System.getProperty("java.io.tmpdir"))), "below the temp dir");
    assertTrue(root.endsWith(Path.of("capsule", "runs")), root::toString);
  }

  @ParameterizedTest(name = "XDG_STATE_HOME={0} HOME={1}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
          /state     | /home/ann | /state/capsule/runs
          -          | /home/ann | /home/ann/.local/state/capsule/runs
          ''         | /home/ann | /home/ann/.local/state/capsule/runs
          rel/state  | /home/ann | /home/ann/.local/state/capsule/runs
          -          | -         | /passwd/home/.local/state/capsule/runs
          -          | rel       | /passwd/home/.local/state/capsule/runs
          """)
  void thePrivateWorkRootFollowsXdgThenHome(String xdg, String home, String expected) {
    Map<String, String> env = new HashMap<>();
    if (xdg != null) {
      env.put("XDG_STATE_HOME", xdg);
    }
    if (home != null) {
      env.put("HOME", home);
    }
    assertEquals(Path.of(expected), RunSettings.privateWorkRoot(env, "/passwd/home"));
  }

  @Test
  void aWorkRootSetIsTakenAsIs() {
    assertEquals(
        Path.of("/srv/runs"),
        DEFAULTS.withOverrides(Map.of("capsule.run.work-root", "/srv/runs")).run().workRoot());
  }

  @Test
  void loadReadsTheStandardStack() {
    assertEquals(DEFAULTS.run(), CapsuleSettings.load().run());
  }

  @Test
  void anApplicationConfigOverridesTheReference() {
    CapsuleSettings s =
        CapsuleSettings.from(
            ConfigFactory.parseString(
                    """
                    capsule.run.inactivity-timeout = 2s
                    capsule.run.batch-max-lines = 8
                    capsule.driver.engine = chicory
                    capsule.hub { url = "wss://hub.example.com/runner", token-file = /run/t.jwt }
                    capsule.protocol.reconnect.jitter = 0
                    """)
                .withFallback(ConfigFactory.defaultReference()));

    assertEquals(Duration.ofSeconds(2), s.run().inactivityTimeout());
    assertEquals(8, s.run().batchMaxLines());
    assertEquals(DriverSettings.Engine.CHICORY, s.driver().engine());
    assertEquals(Optional.of(URI.create("wss://hub.example.com/runner")), s.hub().url());
    assertEquals(Optional.of(Path.of("/run/t.jwt")), s.hub().tokenFile());
    assertEquals(0.0, s.protocol().reconnect().jitter());
    assertEquals(DEFAULTS.run().terminalGrace(), s.run().terminalGrace(), "the rest stays");
  }

  @Test
  void aPartialConfigIsCompletedFromTheReference() {
    CapsuleSettings s = CapsuleSettings.from(ConfigFactory.parseString("capsule.run.trace = off"));

    assertFalse(s.run().trace());
    assertEquals(DEFAULTS.protocol(), s.protocol());
  }

  @Test
  void testsShrinkTimersWithOverrides() {
    CapsuleSettings fast =
        DEFAULTS.withOverrides(
            Map.of(
                "capsule.run.terminal-grace", "0s",
                "capsule.run.interrupt-grace", "50ms",
                "capsule.protocol.heartbeat-idle", "100ms",
                "capsule.protocol.dead-after", "300ms"));
    CapsuleSettings fromHocon = fast.withOverrides("capsule.run.line-cap-bytes = 1KiB");

    assertEquals(Duration.ZERO, fast.run().terminalGrace());
    assertEquals(Duration.ofMillis(50), fast.run().interruptGrace());
    assertEquals(Duration.ofMillis(300), fast.protocol().deadAfter());
    assertEquals(1024, fromHocon.run().lineCapBytes());
    assertEquals(Duration.ofMillis(50), fromHocon.run().interruptGrace(), "overrides stack");
    assertEquals(Duration.ofSeconds(3), DEFAULTS.run().terminalGrace(), "the original is kept");
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          capsule.run.inactivity-timeout              | -5s        | must be a positive duration
          capsule.run.driver-call-timeout             | 0s         | must be a positive duration
          capsule.run.terminal-grace                  | -1ms       | must not be negative
          capsule.run.version-probe-timeout           | soon       | wrong kind
          capsule.run.batch-max-lines                 | 0          | between 1 and
          capsule.run.batches-in-flight               | 0          | between 1 and
          capsule.run.line-cap-bytes                  | 0          | between 1 and
          capsule.run.stderr-tail-bytes               | lots       | wrong kind
          capsule.run.trace                           | maybe      | wrong kind
          capsule.driver.engine                       | v8         | must be wasmtime or chicory
          capsule.driver.memory-cap                   | 100000     | whole number of 64 KiB
          capsule.driver.memory-cap                   | 8GiB       | between 65536 and
          capsule.protocol.reconnect.jitter           | 1.5        | between 0 and 1
          capsule.protocol.reconnect.jitter           | -0.1       | between 0 and 1
          capsule.protocol.reconnect.min-backoff      | 1m         | must not exceed capsule.protocol.reconnect.max-backoff
          capsule.protocol.dead-after                 | 15s        | must be longer than capsule.protocol.heartbeat-idle
          capsule.protocol.liveness.silence-limit     | 1s         | must be longer than capsule.protocol.liveness.ping-interval
          capsule.protocol.liveness.ping-interval     | 0s         | must be a positive duration
          capsule.protocol.replay-buffer-max-frames   | 0          | between 1 and
          capsule.protocol.frame-cap                  | 10         | between 1024 and
          capsule.hub.url                             | http://hub | must be a ws:// or wss:// URL
          capsule.bridge.max-in-flight                | -1         | between 1 and
          capsule.bridge.body-cap                     | 0B         | between 1 and
          """)
  void aBadValueFailsNamingItsKey(String key, String value, String says) {
    SettingsInvalid e =
        assertThrows(
            SettingsInvalid.class,
            () -> CapsuleSettings.from(ConfigFactory.parseMap(Map.of(key, value.strip()))));

    assertEquals(1, e.diagnostics().size(), e::getMessage);
    Diagnostic d = e.diagnostic();
    assertEquals(Code.E_CFG_001, d.code());
    assertEquals(key, d.details().get("key"));
    assertTrue(d.message().startsWith(key + " "), d::message);
    assertTrue(d.message().contains(says), d::message);
    assertTrue(d.details().containsKey("origin"), d::render);
  }

  @Test
  void everyBadKeyIsReportedAtOnce() {
    SettingsInvalid e =
        assertThrows(
            SettingsInvalid.class,
            () ->
                DEFAULTS.withOverrides(
                    """
                    capsule.run.batch-max-lines = 0
                    capsule.driver.engine = v8
                    capsule.protocol.reconnect.jitter = 2
                    """));

    assertEquals(
        List.of(
            "capsule.run.batch-max-lines",
            "capsule.driver.engine",
            "capsule.protocol.reconnect.jitter"),
        e.diagnostics().stream().map(d -> d.details().get("key")).toList());
  }

  @Test
  void harnessContainmentIsAutoByDefaultAndTakesOnlyItsThreeValues() {
    assertEquals(HarnessSettings.Containment.AUTO, DEFAULTS.harness().containment());
    assertEquals(
        HarnessSettings.Containment.REQUIRED,
        DEFAULTS
            .withOverrides(Map.of("capsule.harness.containment", "required"))
            .harness()
            .containment());
    assertEquals(
        HarnessSettings.Containment.OFF,
        DEFAULTS
            .withOverrides(Map.of("capsule.harness.containment", "off"))
            .harness()
            .containment());
    SettingsInvalid e =
        assertThrows(
            SettingsInvalid.class,
            () -> DEFAULTS.withOverrides(Map.of("capsule.harness.containment", "sometimes")));
    assertEquals("capsule.harness.containment", e.diagnostic().details().get("key"));
    assertTrue(e.diagnostic().message().contains("auto, required or off"), e.diagnostic()::message);
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          capsule.harness.resources.mechanism     | cgroup-v3 | must be auto, cgroup-v2, cgroup-v1 or rlimit-only
          capsule.harness.resources.memory        | 64GiB     | must not be above its ceiling
          capsule.harness.resources.processes     | 2         | must be between 4 and
          capsule.harness.resources.open-files    | 100000    | must not be above its ceiling
          capsule.harness.resources.cpu           | 0.001     | must be 0 (every core) or between
          capsule.harness.resources.cgroup-parent | /abs      | must be relative
          capsule.harness.resources.cgroup-parent | a/../b    | must be relative
          """)
  void aBadResourceSettingFailsNamingItsKey(String key, String value, String says) {
    SettingsInvalid e =
        assertThrows(SettingsInvalid.class, () -> DEFAULTS.withOverrides(Map.of(key, value)));
    assertEquals(key, e.diagnostic().details().get("key"), e.diagnostic()::render);
    assertTrue(e.diagnostic().message().contains(says), e.diagnostic()::render);
  }

  @Test
  void aCpuDefaultOfZeroMeansEveryCoreCappedByTheCeiling() {
    ResourceSettings all = DEFAULTS.harness().resources();
    assertEquals(8.0, all.cpuOn(8));
    assertEquals(8.0, all.cpuMaxOn(8));
    ResourceSettings capped =
        DEFAULTS
            .withOverrides(Map.of("capsule.harness.resources.cpu-max", "2"))
            .harness()
            .resources();
    assertEquals(2.0, capped.cpuOn(8));
    assertEquals(1.0, capped.cpuOn(1));
  }

  @Test
  void aKeyOverriddenWithNullIsReportedMissing() {
    SettingsInvalid e =
        assertThrows(
            SettingsInvalid.class,
            () -> DEFAULTS.withOverrides("capsule.bridge.call-timeout = null"));

    assertEquals("capsule.bridge.call-timeout", e.diagnostic().details().get("key"));
    assertTrue(e.diagnostic().message().contains("missing"), e.diagnostic()::message);
  }
}
