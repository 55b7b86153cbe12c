package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.settings.SettingsInvalid;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code capsule.hub.http.*}: the defaults the reference.conf documents, overrides, refusals. */
class GuardedBindingLimitsTest {

  @Test
  void theDefaultsAreTheDocumentedOnes() {
    GuardedBinding.Limits l = GuardedBinding.Limits.fromConfig(ConfigFactory.load());
    assertEquals(
        new GuardedBinding.Limits(Duration.ofSeconds(10), Duration.ofSeconds(60), 4096, 512), l);
  }

  @Test
  void anOverrideWins() {
    GuardedBinding.Limits l =
        GuardedBinding.Limits.fromConfig(
            ConfigFactory.parseString(
                    "capsule.hub.http { header-timeout = 2s, max-connections-per-address = 64 }")
                .withFallback(ConfigFactory.load()));
    assertEquals(Duration.ofSeconds(2), l.headerTimeout());
    assertEquals(64, l.maxConnectionsPerAddress());
    assertEquals(4096, l.maxConnections());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          header-timeout = 0s                 | header-timeout
          idle-timeout = -1s                  | idle-timeout
          max-connections = 0                 | max-connections
          max-connections-per-address = -5    | max-connections-per-address
          header-timeout = soon               | header-timeout
          max-connections = many              | max-connections
          """)
  void aBadValueIsRefusedWithItsKeyAndCode(String setting, String key) {
    SettingsInvalid e =
        assertThrows(
            SettingsInvalid.class,
            () ->
                GuardedBinding.Limits.fromConfig(
                    ConfigFactory.parseString("capsule.hub.http." + setting)
                        .withFallback(ConfigFactory.load())));
    assertEquals(Code.E_CFG_001, e.code());
    assertTrue(e.getMessage().contains(key), e.getMessage());
  }
}
