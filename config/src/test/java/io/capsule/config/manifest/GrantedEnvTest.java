package io.capsule.config.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The harness's environment starts empty: only the host's values of the granted names. */
class GrantedEnvTest {
  private static final Map<String, String> HOST =
      Map.of("HOME", "/home/u", "PATH", "/usr/bin", "SECRET_TOKEN", "s3", "OTHER", "x");

  @Test
  void passesOnlyGrantedNamesInGrantOrderAndSkipsUnsetOnes() {
    Capabilities.Env env =
        new Capabilities.Env(List.of("PATH", "HOME", "UNSET"), List.of("SECRET_TOKEN"));
    Map<String, String> values = env.grantedValues(HOST);
    assertEquals(List.of("PATH", "HOME", "SECRET_TOKEN"), List.copyOf(values.keySet()));
    assertEquals("/usr/bin", values.get("PATH"));
    assertEquals("s3", values.get("SECRET_TOKEN"));
  }

  @Test
  void grantsNothingWhenNothingIsAllowed() {
    assertEquals(Map.of(), new Capabilities.Env(List.of(), List.of()).grantedValues(HOST));
  }
}
