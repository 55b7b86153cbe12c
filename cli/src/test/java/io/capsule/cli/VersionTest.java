package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code capsule --version} says the build's version, the engine and the Java runtime. */
class VersionTest {

  @Test
  void versionPrintsTheBuildVersionTheEngineAndTheJavaVersion() {
    Cli.Result r = Cli.run("--version");
    assertEquals(0, r.exit(), r.err());
    List<String> lines = r.out().lines().toList();
    String version = System.getProperty("test.capsule-version");
    assertEquals("capsule " + version, lines.get(0));
    assertTrue(
        lines.get(1).startsWith("engine: wasmtime (wasmtime-java 0.")
            && lines.get(1).contains("chicory 1."),
        lines.get(1));
    assertTrue(
        lines.get(2).startsWith("java: " + System.getProperty("java.version") + " ("),
        lines.get(2));
  }

  @Test
  void theRunnerAnnouncesTheReleaseVersionNotDevelopment() {
    assertEquals(System.getProperty("test.capsule-version"), RunnerNode.version());
  }
}
