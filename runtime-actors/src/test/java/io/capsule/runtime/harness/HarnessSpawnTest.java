package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class HarnessSpawnTest {

  private static final String SETSID = ProcessGroup.SETSID.toString();

  @Test
  void theHarnessRunsUnderSetsidWithItsArgs() {
    assertEquals(
        List.of(SETSID, "/opt/h", "-p", "x"),
        HarnessSpawn.command(Path.of("/opt/h"), List.of("-p", "x"), false));
  }

  @Test
  void anIgnoredSigintIsResetThroughEnv() {
    assertEquals(
        List.of(SETSID, "/usr/bin/env", "--default-signal=INT", "/opt/h", "a"),
        HarnessSpawn.command(Path.of("/opt/h"), List.of("a"), true));
  }

  @Test
  void aBinaryPathWithAnEqualsSignIsNotPassedThroughEnv() {
    assertEquals(
        List.of(SETSID, "/opt/a=b/h"),
        HarnessSpawn.command(Path.of("/opt/a=b/h"), List.of(), true));
  }
}
