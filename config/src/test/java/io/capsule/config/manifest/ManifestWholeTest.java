package io.capsule.config.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** All errors at once, path escapes through the file system, and credential grants. */
class ManifestWholeTest {

  @TempDir Path capsule;
  @TempDir Path outside;

  @Test
  void reportsEveryProblemAtOnceSortedByLine() {
    String yaml =
        """
        name: Bad_Name
        version: one
        colour: red
        artifacts:
          - {name: d, version: 1.0.0, runtime: driver, path: ../d.wasm}
        inference:
          transport: grpc
          driver: {artifact: missing}
          max_turns: -3
        capabilities:
          env:
            allow: [HOME, GITHUB_TOKEN]
          network:
            allow: ["*.example.com:0"]
        lifecycle:
          conversation: forever
        """;

    ManifestInvalid e =
        assertThrows(ManifestInvalid.class, () -> ManifestLoader.parse(yaml, capsule, "m.yaml"));

    assertEquals(
        List.of(
            "E-MAN-002 name 1",
            "E-MAN-002 version 2",
            "E-MAN-002 colour 3",
            "E-MAN-003 artifacts[0].path 5",
            "E-MAN-002 inference.transport 7",
            "E-MAN-002 inference.driver.artifact 8",
            "E-MAN-002 inference.max_turns 9",
            "E-CAP-016 capabilities.env.allow[1] 12",
            "E-MAN-002 capabilities.network.allow[0] 14",
            "E-MAN-002 lifecycle.conversation 16"),
        e.diagnostics().stream()
            .map(d -> d.code() + " " + d.details().get("key") + " " + d.details().get("line"))
            .toList(),
        e::render);
    assertTrue(e.getMessage().contains("(and 9 more)"), e.getMessage());
    assertEquals(10, e.render().lines().filter(l -> l.startsWith("E-")).count(), e::render);
  }

  @Test
  void refusesAnArtifactReachedThroughASymlinkOut() throws IOException {
    Files.writeString(outside.resolve("d.wasm"), "not really wasm");
    Files.createSymbolicLink(capsule.resolve("drivers"), outside);

    ManifestInvalid e =
        assertThrows(
            ManifestInvalid.class,
            () -> ManifestLoader.parse(withArtifactPath("drivers/d.wasm"), capsule, "m"));

    Diagnostic d = e.diagnostic();
    assertEquals(Code.E_MAN_003, d.code(), e::render);
    assertEquals("artifacts[0].path", d.details().get("key"));
    assertTrue(d.message().contains("symlink"), d::message);
  }

  @Test
  void refusesAPromptFileThatIsASymlinkToAFileOutside() throws IOException {
    Files.writeString(outside.resolve("secret.txt"), "do not inline me");
    Files.createSymbolicLink(capsule.resolve("prompt.md"), outside.resolve("secret.txt"));

    ManifestInvalid e =
        assertThrows(
            ManifestInvalid.class,
            () ->
                ManifestLoader.parse(
                    ManifestErrorsTest.BASE + "  system_prompt_file: prompt.md\n", capsule, "m"));

    assertEquals(Code.E_MAN_003, e.code(), e::render);
    assertEquals(1, e.diagnostics().size(), e::render);
  }

  @Test
  void acceptsSymlinksThatStayInsideAndACapsuleReachedThroughASymlink() throws IOException {
    Files.createDirectories(capsule.resolve("build"));
    Files.writeString(capsule.resolve("build/d.wasm"), "bytes");
    Files.createSymbolicLink(capsule.resolve("drivers"), capsule.resolve("build"));
    Path link = outside.resolve("capsule-link");
    Files.createSymbolicLink(link, capsule);

    Manifest m = ManifestLoader.parse(withArtifactPath("drivers/d.wasm"), link, "m");

    assertEquals(capsule.toRealPath(), m.capsuleDir());
    assertEquals(
        Optional.of(capsule.toRealPath().resolve("drivers/d.wasm")),
        m.artifactPath(m.driverArtifact()));
  }

  @Test
  void acceptsDotDotThatStaysInsideAndAnArtifactNotYetBuilt() {
    Manifest m = ManifestLoader.parse(withArtifactPath("a/../drivers/d.wasm"), capsule, "m");

    assertEquals(new ArtifactSource.File("a/../drivers/d.wasm"), m.driverArtifact().source());
  }

  private static String withArtifactPath(String path) {
    return ManifestErrorsTest.BASE.replace("builtin: jsonl", "path: " + path);
  }

  static Stream<Arguments> envGrants() {
    return Stream.of(
        // allow, allow_credentials, expected errors (E-CAP-016 keys), expected warnings
        Arguments.of("[HOME, PATH]", "[]", List.of(), List.of()),
        Arguments.of("[HOME, OPENAI_API_KEY]", "[]", List.of("allow[1]"), List.of()),
        Arguments.of("[GH_TOKEN, aws_secret]", "[]", List.of("allow[0]", "allow[1]"), List.of()),
        Arguments.of("[DB_PASSWORD_FILE]", "[]", List.of("allow[0]"), List.of()),
        Arguments.of(
            "[OPENAI_API_KEY]", "[OPENAI_API_KEY]", List.of(), List.of("allow_credentials[0]")),
        Arguments.of("[HOME]", "[ANTHROPIC_API_KEY]", List.of(), List.of("allow_credentials[0]")),
        Arguments.of(
            "[A_TOKEN, B_TOKEN]",
            "[B_TOKEN]",
            List.of("allow[0]"),
            List.of("allow_credentials[0]")));
  }

  @ParameterizedTest(name = "allow {0} with credentials {1}")
  @MethodSource("envGrants")
  void credentialShapedNamesAreRefusedUnlessGrantedKnowingly(
      String allow, String credentials, List<String> errors, List<String> warnings) {
    String yaml =
        ManifestErrorsTest.BASE
            + "capabilities:\n  env:\n    allow: "
            + allow
            + "\n    allow_credentials: "
            + credentials
            + "\n";

    List<Diagnostic> found;
    List<Diagnostic> warned;
    try {
      Manifest m = ManifestLoader.parse(yaml, capsule, "m");
      found = List.of();
      warned = m.warnings();
    } catch (ManifestInvalid e) {
      found = e.diagnostics();
      warned = e.warnings();
    }

    assertEquals(errors.stream().map(k -> "E-CAP-016 capabilities.env." + k).toList(), keys(found));
    assertEquals(
        warnings.stream().map(k -> "W-SEC-024 capabilities.env." + k).toList(), keys(warned));
  }

  private static List<String> keys(List<Diagnostic> diagnostics) {
    return diagnostics.stream().map(d -> d.code() + " " + d.details().get("key")).toList();
  }

  @Test
  void everyDiagnosticNamesFileKeyLineAndColumnInThatOrder() {
    ManifestInvalid e =
        assertThrows(
            ManifestInvalid.class,
            () -> ManifestLoader.parse(ManifestErrorsTest.BASE + "x: 1\n", capsule, "cap/m.yaml"));

    assertEquals(
        Map.of("file", "cap/m.yaml", "key", "x", "line", "7", "column", "1"),
        e.diagnostic().details());
    assertEquals(
        List.of("file", "key", "line", "column"), List.copyOf(e.diagnostic().details().keySet()));
    assertTrue(
        e.diagnostic().render().startsWith("E-MAN-002 unknown key 'x' at the top level"),
        e.diagnostic()::render);
  }
}
