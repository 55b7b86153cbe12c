package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.LaunchPlan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LaunchPlanApplierTest {

  @TempDir Path runDir;

  private static final Path BINARY = Path.of("/bin/sh");

  private static LaunchPlan plan(List<String> args, List<EnvVar> env, List<DriverFile> files) {
    return new LaunchPlan(args, env, files, Optional.empty(), false, Optional.empty());
  }

  private AppliedLaunch apply(LaunchPlan plan, List<String> allow, Map<String, String> host)
      throws IOException {
    return LaunchPlanApplier.apply(plan, BINARY, runDir, runDir, allow, host);
  }

  static Stream<Arguments> refusedPlans() {
    DriverFile ok = new DriverFile("ok.json", "{}");
    return Stream.of(
        Arguments.of("an empty file name", plan(List.of(), List.of(), List.of(f("")))),
        Arguments.of("a dot file name", plan(List.of(), List.of(), List.of(f(".")))),
        Arguments.of("a dot-dot file name", plan(List.of(), List.of(), List.of(f("..")))),
        Arguments.of("a file name with a slash", plan(List.of(), List.of(), List.of(f("a/b")))),
        Arguments.of("a file name with NUL", plan(List.of(), List.of(), List.of(f("a\0b")))),
        Arguments.of("a file name twice", plan(List.of(), List.of(), List.of(ok, ok))),
        Arguments.of("an empty env name", plan(List.of(), List.of(e("", "v")), List.of(ok))),
        Arguments.of("an env name with '='", plan(List.of(), List.of(e("A=B", "v")), List.of())),
        Arguments.of("an env name with NUL", plan(List.of(), List.of(e("A\0", "v")), List.of())),
        Arguments.of("an env value with NUL", plan(List.of(), List.of(e("A", "v\0")), List.of())),
        Arguments.of("an argument with NUL", plan(List.of("a\0"), List.of(), List.of(ok))));
  }

  private static DriverFile f(String name) {
    return new DriverFile(name, "x");
  }

  private static EnvVar e(String name, String value) {
    return new EnvVar(name, value);
  }

  @ParameterizedTest(name = "{0} refuses the plan with E-RUN-034 and leaves nothing behind")
  @MethodSource("refusedPlans")
  void refusesUnusablePlans(String name, LaunchPlan plan) throws IOException {
    LaunchPlanRefused refused =
        assertThrows(LaunchPlanRefused.class, () -> apply(plan, List.of(), Map.of()));
    assertEquals(Code.E_RUN_034, refused.code());
    try (Stream<Path> left = Files.list(runDir)) {
      assertEquals(0, left.count());
    }
  }

  @Test
  void writesFilesIntoAFreshPrivateDirectory() throws IOException {
    LaunchPlan plan =
        plan(List.of(), List.of(), List.of(new DriverFile("mcp.json", "{\"a\":1}"), f("b")));
    try (AppliedLaunch applied = apply(plan, List.of(), Map.of())) {
      Path dir = applied.filesDir();
      assertTrue(dir.isAbsolute());
      assertEquals(runDir.toAbsolutePath(), dir.getParent());
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
      assertEquals(
          "rw-------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("mcp.json"))));
      assertEquals("{\"a\":1}", Files.readString(dir.resolve("mcp.json")));
      assertEquals(List.of("mcp.json", "b"), applied.fileNames());
    }
  }

  @Test
  void eachApplicationGetsItsOwnDirectory() throws IOException {
    LaunchPlan plan = plan(List.of(), List.of(), List.of());
    try (AppliedLaunch one = apply(plan, List.of(), Map.of());
        AppliedLaunch two = apply(plan, List.of(), Map.of())) {
      assertFalse(one.filesDir().equals(two.filesDir()));
    }
  }

  @Test
  void substitutesTheFilesDirInArgsAndEnvValuesOnly() throws IOException {
    byte[] stdin = "{files_dir}".getBytes(StandardCharsets.UTF_8);
    LaunchPlan plan =
        new LaunchPlan(
            List.of("--config", "{files_dir}/mcp.json", "x{files_dir}y{files_dir}"),
            List.of(e("CFG", "{files_dir}/c"), e("{files_dir}", "n")),
            List.of(),
            Optional.of(stdin),
            true,
            Optional.empty());
    try (AppliedLaunch applied = apply(plan, List.of(), Map.of())) {
      String dir = applied.filesDir().toString();
      assertEquals(List.of("--config", dir + "/mcp.json", "x" + dir + "y" + dir), applied.args());
      assertEquals(dir + "/c", applied.env().get("CFG"));
      assertEquals("n", applied.env().get("{files_dir}"));
      assertArrayEquals(stdin, applied.stdin());
      assertTrue(applied.keepStdinOpen());
    }
  }

  @Test
  void environmentIsTheAllowedHostValuesThenEnvSetWins() throws IOException {
    Map<String, String> host =
        Map.of("PATH", "/usr/bin", "HOME", "/home/x", "SECRET", "s", "LANG", "C");
    LaunchPlan plan = plan(List.of(), List.of(e("LANG", "en"), e("NEW", "1")), List.of());
    try (AppliedLaunch applied = apply(plan, List.of("HOME", "LANG", "MISSING"), host)) {
      assertEquals(Map.of("HOME", "/home/x", "LANG", "en", "NEW", "1"), applied.env());
    }
  }

  @Test
  void toStringNeverShowsValues() throws IOException {
    LaunchPlan plan =
        plan(
            List.of("--token", "sk-secret-arg"),
            List.of(e("API", "secret-env")),
            List.of(new DriverFile("f", "secret-file")));
    try (AppliedLaunch applied = apply(plan, List.of(), Map.of())) {
      String shown = applied.toString();
      assertFalse(shown.contains("secret"), shown);
      assertTrue(shown.contains("args=2"), shown);
      assertTrue(shown.contains("API"), shown);
    }
  }

  @Test
  void closeRemovesTheFilesDirectoryAndIsIdempotent() throws IOException {
    AppliedLaunch applied =
        apply(plan(List.of(), List.of(), List.of(f("a"), f("b"))), List.of(), Map.of());
    Path dir = applied.filesDir();
    Files.writeString(dir.resolve("written-by-harness"), "x");
    applied.close();
    assertFalse(Files.exists(dir));
    applied.close();
    assertFalse(Files.exists(dir));
  }
}
