package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.config.settings.CapsuleSettings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The bridge's limits: from the runtime's settings, and refused when unusable. */
class BridgeConfigTest {

  @Test
  void defaultsAreTheReferenceConfSettings() {
    assertEquals(BridgeConfig.defaults(), BridgeConfig.from(CapsuleSettings.defaults().bridge()));
  }

  @Test
  void takesEveryLimitFromTheSettings() {
    CapsuleSettings settings =
        CapsuleSettings.defaults()
            .withOverrides(
                Map.of(
                    "capsule.bridge.call-timeout", "5s",
                    "capsule.bridge.output-cap", "2KiB",
                    "capsule.bridge.max-in-flight", "3",
                    "capsule.bridge.max-connections", "4",
                    "capsule.bridge.request-read-timeout", "2s",
                    "capsule.bridge.body-cap", "8KiB"));
    assertEquals(
        new BridgeConfig(
            BridgeConfig.DEFAULT_SERVER_NAME,
            Duration.ofSeconds(5),
            2048,
            3,
            4,
            Duration.ofSeconds(2),
            8192,
            ToolPolicy.ALLOW_ALL),
        BridgeConfig.from(settings.bridge()));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({"' ', 1, 1", "murmur, 0, 1", "murmur, 1, 0", "murmur, 1, -5"})
  void refusesABlankNameAndLimitsBelowOne(String name, int outputCap, int inFlight) {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            BridgeConfig.defaults()
                .withServerName(name)
                .withOutputCapBytes(outputCap)
                .withMaxInFlight(inFlight));
  }
}
