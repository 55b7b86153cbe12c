package io.capsule.config.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Settings are as strict as manifests (docs/settings.md, "Strictness"): an unknown key under {@code
 * capsule.*} and a duration without a unit are refused at start, saying what to write.
 */
class SettingsStrictnessTest {

  @ParameterizedTest(name = "{0} is refused with {1}: {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          capsule.run.inactivty-timeout = 5s | E_CFG_002 | capsule.run.inactivty-timeout is not a setting; did you mean "capsule.run.inactivity-timeout"?
          capsule.runs.terminal-grace = 5s   | E_CFG_002 | did you mean "capsule.run.terminal-grace"?
          capsule.zzz.nothing-like-it = 1    | E_CFG_002 | capsule.zzz.nothing-like-it is not a setting
          capsule.run.inactivity-timeout = 5 | E_CFG_003 | capsule.run.inactivity-timeout = 5 has no unit; write one, e.g. 5s or 5ms
          capsule.run.inactivity-timeout = "300" | E_CFG_003 | has no unit
          """)
  void aSettingThatWouldBeIgnoredOrMisreadIsRefused(String hocon, Code code, String says) {
    SettingsInvalid e =
        assertThrows(
            SettingsInvalid.class, () -> CapsuleSettings.from(ConfigFactory.parseString(hocon)));
    List<Diagnostic> problems = e.diagnostics();
    assertEquals(1, problems.size(), problems.toString());
    assertEquals(code, problems.get(0).code());
    assertTrue(problems.get(0).message().contains(says), problems.get(0).message());
    assertTrue(problems.get(0).details().get("origin") != null, "says where the key came from");
  }

  @ParameterizedTest(name = "{0} is accepted")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          capsule.run.inactivity-timeout = 5s
          capsule.run.inactivity-timeout = 250ms
          capsule.run.terminal-grace = 0
          capsule.log.level = DEBUG
          """)
  void knownKeysWithUnitsZeroAndLoggingKeysAreAccepted(String hocon) {
    CapsuleSettings.from(ConfigFactory.parseString(hocon));
  }
}
