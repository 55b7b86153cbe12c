package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Resolving granted binaries on the granted PATH, once, at launch. */
class ShellToolTest {
  @TempDir Path tmp;
  private Path first;
  private Path second;

  @BeforeEach
  void binaries() throws Exception {
    first = Files.createDirectories(tmp.resolve("first"));
    second = Files.createDirectories(tmp.resolve("second"));
    executable(first.resolve("tool"));
    executable(second.resolve("tool"));
    executable(second.resolve("other"));
    Files.writeString(first.resolve("plain"), "not executable");
    Files.createDirectories(first.resolve("dir"));
  }

  private static void executable(Path p) throws Exception {
    Files.writeString(p, "#!/bin/sh\n");
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @ParameterizedTest(name = "[{index}] {0} on {1}")
  @CsvSource({
    "tool,  FIRST:SECOND,    FIRST",
    "tool,  SECOND:FIRST,    SECOND",
    "other, FIRST:SECOND,    SECOND",
    "tool,  :relative:FIRST, FIRST",
    "plain, FIRST,           ''",
    "dir,   FIRST,           ''",
    "tool,  '',              ''",
    "../first/tool, SECOND,  ''",
    "missing, FIRST:SECOND,  ''"
  })
  void findsTheFirstExecutableFileInTheAbsoluteDirectoriesOfTheGrantedPath(
      String name, String path, String expectedDir) {
    Map<String, String> env =
        Map.of(
            "PATH", path.replace("FIRST", first.toString()).replace("SECOND", second.toString()));
    Optional<Path> expected =
        expectedDir.isEmpty()
            ? Optional.empty()
            : Optional.of((expectedDir.equals("FIRST") ? first : second).resolve(name));
    assertEquals(expected, ShellTool.resolve(name, env));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({"tool", "other"})
  void findsNothingWithoutAGrantedPath(String name) {
    assertEquals(Optional.empty(), ShellTool.resolve(name, Map.of("HOME", "/root")));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource(
      delimiter = '|',
      value = {"tool,missing,other,gone | missing, gone", "nope | nope"})
  void refusesTheInventoryNamingEveryBinaryThatDoesNotResolve(String allow, String missing) {
    Map<String, String> env = Map.of("PATH", first + ":" + second);
    ToolBridgeException e =
        assertThrows(
            ToolBridgeException.class, () -> ShellTool.resolveAll(List.of(allow.split(",")), env));
    assertEquals("E-TOOL-001", e.code().id());
    assertTrue(e.getMessage().contains("names " + missing + ", not found"), e.getMessage());
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({"'tool,other,tool'"})
  void keepsManifestOrderWithoutDuplicates(String allow) {
    List<ShellTool> tools =
        ShellTool.resolveAll(List.of(allow.split(",")), Map.of("PATH", first + ":" + second));
    assertEquals(
        List.of(
            new ShellTool("tool", first.resolve("tool")),
            new ShellTool("other", second.resolve("other"))),
        tools);
  }
}
