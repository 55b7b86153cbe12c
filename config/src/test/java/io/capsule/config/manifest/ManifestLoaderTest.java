package io.capsule.config.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.config.diag.Code;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Reading a capsule folder: every field, the defaults, inlining and the file-level failures. */
class ManifestLoaderTest {

  static final String FULL =
      """
      name: repo-helper
      version: 1.2.3-rc.1+build.7
      description: Answers questions about a repository.

      artifacts:
        - name: claude-code
          version: 0.6.0
          runtime: driver
          path: drivers/claude-code.wasm
          sha256: 9F2C000000000000000000000000000000000000000000000000000000000abc
        - name: jq
          version: 1.7.1
          runtime: tool
          builtin: jq

      inference:
        transport: process
        driver:
          artifact: claude-code
          config:
            flags: [--verbose, 2]
            nested: {on: true, ratio: 0.5, none: null}
        model: "  claude-sonnet-4-5  "
        command: /opt/claude/bin/claude
        max_turns: 4294967295
        max_session_tokens: 18446744073709551615
        system_prompt: |
          You are careful.
          Cite files.

      capabilities:
        env:
          allow: [HOME, PATH, ANTHROPIC_API_KEY]
          allow_credentials: [ANTHROPIC_API_KEY, GH_TOKEN]
        network:
          allow: ["API.anthropic.com:443", "*.github.com"]
        harness:
          paths:
            - path: ~/.claude/
              access: read-write
            - path: /etc/ssl
        shell:
          allow: [git, rg]
        filesystem:
          read_only: true

      lifecycle:
        conversation: threaded
      """;

  @TempDir Path capsule;

  private Manifest loadFull() throws IOException {
    Files.writeString(capsule.resolve("murmur.yaml"), FULL);
    return ManifestLoader.load(capsule);
  }

  @Test
  void readsEveryTopLevelAndArtifactField() throws IOException {
    Manifest m = loadFull();

    assertEquals("repo-helper", m.name());
    assertEquals("1.2.3-rc.1+build.7", m.version());
    assertEquals(Optional.of("Answers questions about a repository."), m.description());
    assertEquals(capsule.toRealPath(), m.capsuleDir());
    assertEquals(Optional.of(capsule.resolve("murmur.yaml").toAbsolutePath()), m.manifestFile());
    assertEquals(
        List.of(
            new Artifact(
                "claude-code",
                "0.6.0",
                ArtifactRuntime.DRIVER,
                new ArtifactSource.File("drivers/claude-code.wasm"),
                Optional.of("9f2c" + "0".repeat(57) + "abc")),
            new Artifact(
                "jq",
                "1.7.1",
                ArtifactRuntime.TOOL,
                new ArtifactSource.Builtin("jq"),
                Optional.empty())),
        m.artifacts());
    assertEquals("claude-code", m.driverArtifact().name());
    assertEquals(
        Optional.of(capsule.toRealPath().resolve("drivers/claude-code.wasm")),
        m.artifactPath(m.driverArtifact()));
    assertEquals(Optional.empty(), m.artifactPath(m.artifact("jq").orElseThrow()));
    assertEquals(Optional.of("jq"), m.artifact("jq").orElseThrow().builtinName());
  }

  @Test
  void readsEveryInferenceField() throws IOException {
    Inference inf = loadFull().inference();

    assertEquals(Transport.PROCESS, inf.transport());
    assertEquals("claude-code", inf.driver().artifact());
    assertEquals(Optional.of("claude-sonnet-4-5"), inf.model());
    assertEquals(Optional.of("/opt/claude/bin/claude"), inf.command());
    assertEquals(OptionalLong.of(4294967295L), inf.maxTurns());
    assertEquals(OptionalLong.of(Long.MAX_VALUE), inf.maxSessionTokens(), "u64 max is clamped");
    assertEquals(Optional.of("You are careful.\nCite files.\n"), inf.systemPrompt());
    assertEquals(Optional.empty(), inf.systemPromptFile());
  }

  @Test
  void keepsTheDriverConfigAsAJsonTree() throws IOException {
    DriverRef driver = loadFull().inference().driver();
    JsonNode expected =
        new ObjectMapper()
            .readTree(
                "{\"flags\":[\"--verbose\",2],\"nested\":{\"on\":true,\"ratio\":0.5,\"none\":null}}");

    assertEquals(expected, driver.config().orElseThrow());
    assertEquals(expected, new ObjectMapper().readTree(driver.configJson().orElseThrow()));
    ((com.fasterxml.jackson.databind.node.ObjectNode) driver.config().orElseThrow()).put("x", 1);
    assertEquals(expected, driver.config().orElseThrow(), "the manifest's tree is a copy");
  }

  @Test
  void readsEveryCapability() throws IOException {
    Capabilities caps = loadFull().capabilities();

    assertEquals(List.of("HOME", "PATH", "ANTHROPIC_API_KEY"), caps.env().allow());
    assertEquals(List.of("ANTHROPIC_API_KEY", "GH_TOKEN"), caps.env().allowCredentials());
    assertEquals(List.of("HOME", "PATH", "ANTHROPIC_API_KEY", "GH_TOKEN"), caps.env().granted());
    assertEquals(
        List.of(
            new NetworkEntry("api.anthropic.com", false, OptionalInt.of(443)),
            new NetworkEntry("github.com", true, OptionalInt.empty())),
        caps.network().allow());
    assertEquals(
        List.of(
            new HarnessPath("~/.claude", Access.READ_WRITE),
            new HarnessPath("/etc/ssl", Access.READ)),
        caps.harness().paths());
    assertEquals(List.of("git", "rg"), caps.shell().allow());
    assertTrue(caps.filesystem().readOnly());
  }

  @Test
  void readsTheLifecycleAndWarnsOncePerGrantedCredential() throws IOException {
    Manifest m = loadFull();

    assertEquals(Conversation.THREADED, m.lifecycle().conversation());
    assertEquals(2, m.warnings().size());
    assertTrue(m.warnings().stream().allMatch(w -> w.code() == Code.W_SEC_024));
    assertEquals(
        List.of("capabilities.env.allow_credentials[0]", "capabilities.env.allow_credentials[1]"),
        m.warnings().stream().map(w -> w.details().get("key")).toList());
    assertEquals("34", m.warnings().get(0).details().get("line"));
  }

  @Test
  void optionalSectionsTakeTheirDefaults() {
    Manifest m = ManifestLoader.parse(ManifestErrorsTest.BASE, capsule, "m.yaml");

    assertEquals(Optional.empty(), m.description());
    assertEquals(Transport.PROCESS, m.inference().transport());
    assertEquals(Optional.empty(), m.inference().driver().config());
    assertEquals(Optional.empty(), m.inference().model());
    assertEquals(Optional.empty(), m.inference().command());
    assertEquals(OptionalLong.empty(), m.inference().maxTurns());
    assertEquals(OptionalLong.empty(), m.inference().maxSessionTokens());
    assertEquals(Optional.empty(), m.inference().systemPrompt());
    assertEquals(Capabilities.NONE, m.capabilities());
    assertFalse(m.capabilities().filesystem().readOnly());
    assertEquals(Lifecycle.DEFAULT, m.lifecycle());
    assertEquals(Conversation.STATELESS, m.lifecycle().conversation());
    assertEquals(Optional.empty(), m.manifestFile());
  }

  @Test
  void nullValuesCountAsAbsentAndABlankModelAsNone() {
    Manifest m =
        ManifestLoader.parse(
            ManifestErrorsTest.BASE
                + "  model: '   '\n  max_turns:\ncapabilities:\n  env:\n  shell: {allow: }\n",
            capsule,
            "m.yaml");

    assertEquals(Optional.empty(), m.inference().model());
    assertEquals(OptionalLong.empty(), m.inference().maxTurns());
    assertEquals(Capabilities.NONE, m.capabilities());
  }

  @Test
  void inlinesTheSystemPromptFileAsUtf8() throws IOException {
    Files.createDirectories(capsule.resolve("prompts"));
    Files.writeString(capsule.resolve("prompts/system.md"), "Sé bref.\nNo paths.\n");

    Manifest m =
        ManifestLoader.parse(
            ManifestErrorsTest.BASE + "  system_prompt_file: prompts/system.md\n", capsule, "m");

    assertEquals(Optional.of("Sé bref.\nNo paths.\n"), m.inference().systemPrompt());
    assertEquals(Optional.of("prompts/system.md"), m.inference().systemPromptFile());
  }

  @Test
  void refusesAPromptFileThatIsNotUtf8() throws IOException {
    Files.write(capsule.resolve("p.md"), new byte[] {'h', (byte) 0xff, 'i'});

    ManifestInvalid e =
        assertThrows(
            ManifestInvalid.class,
            () ->
                ManifestLoader.parse(
                    ManifestErrorsTest.BASE + "  system_prompt_file: p.md\n", capsule, "m"));

    assertEquals(Code.E_MAN_002, e.code());
    assertTrue(e.diagnostic().message().contains("not UTF-8"), e::render);
  }

  @Test
  void refusesAPromptFileAndAManifestLargerThanOneMebibyte() throws IOException {
    Files.writeString(capsule.resolve("p.md"), "x".repeat(TextFiles.CAP_BYTES + 1));
    Files.writeString(
        capsule.resolve("murmur.yaml"), "# " + "x".repeat(TextFiles.CAP_BYTES) + "\n");

    ManifestInvalid prompt =
        assertThrows(
            ManifestInvalid.class,
            () ->
                ManifestLoader.parse(
                    ManifestErrorsTest.BASE + "  system_prompt_file: p.md\n", capsule, "m"));
    ManifestInvalid manifest =
        assertThrows(ManifestInvalid.class, () -> ManifestLoader.load(capsule));

    assertEquals(Code.E_MAN_002, prompt.code());
    assertTrue(prompt.diagnostic().message().contains("larger than"), prompt::render);
    assertEquals(Code.E_MAN_001, manifest.code());
    assertTrue(manifest.diagnostic().message().contains("larger than"), manifest::render);
  }

  @Test
  void resolvesARelativeCommandInsideTheCapsuleAndKeepsOthersAsWritten() {
    String base = ManifestErrorsTest.BASE;
    Path dir = ManifestLoader.parse(base, capsule, "m").capsuleDir();

    assertEquals(
        Optional.of(dir.resolve("harness/run.sh").toString()),
        ManifestLoader.parse(base + "  command: ./harness/run.sh\n", capsule, "m")
            .resolvedCommand());
    assertEquals(
        Optional.of("/usr/bin/env"),
        ManifestLoader.parse(base + "  command: /usr/bin/env\n", capsule, "m").resolvedCommand());
    assertEquals(
        Optional.of("claude"),
        ManifestLoader.parse(base + "  command: claude\n", capsule, "m").resolvedCommand());
  }

  @Test
  void loadsFromTheManifestFileAsWellAsTheFolder() throws IOException {
    Path file = capsule.resolve("murmur.yaml");
    Files.writeString(file, ManifestErrorsTest.BASE);

    assertEquals(ManifestLoader.load(capsule), ManifestLoader.load(file));
  }

  @Test
  void aFolderWithoutAManifestIsUnreadable() {
    ManifestInvalid e = assertThrows(ManifestInvalid.class, () -> ManifestLoader.load(capsule));

    assertEquals(Code.E_MAN_001, e.code());
    assertEquals(capsule.resolve("murmur.yaml").toString(), e.diagnostic().details().get("file"));
    assertTrue(e.diagnostic().message().contains("no manifest"), e::render);
    assertTrue(e.diagnostic().hint().contains("create "), e::render);
  }

  @Test
  void aMissingFolderSaysSoAndDoesNotBlameTheYaml() {
    Path nowhere = capsule.resolve("no-such-capsule");
    ManifestInvalid e = assertThrows(ManifestInvalid.class, () -> ManifestLoader.load(nowhere));

    assertEquals(Code.E_MAN_001, e.code());
    assertTrue(
        e.diagnostic().message().contains("there is no capsule folder " + nowhere), e::render);
    assertTrue(e.diagnostic().hint().contains("capsule folder holding murmur.yaml"), e::render);
    assertTrue(!e.render().contains("YAML"), e::render);
  }

  @Test
  void aManifestThatIsNotUtf8IsUnreadable() throws IOException {
    Files.write(
        capsule.resolve("murmur.yaml"), "name: \u00e9".getBytes(StandardCharsets.ISO_8859_1));

    ManifestInvalid e = assertThrows(ManifestInvalid.class, () -> ManifestLoader.load(capsule));

    assertEquals(Code.E_MAN_001, e.code());
  }

  static List<Path> exampleCapsules() throws IOException {
    return Examples.capsules();
  }

  @ParameterizedTest(name = "examples/{0}")
  @MethodSource("exampleCapsules")
  void everyExampleCapsuleIsValidAndNamedLikeItsFolder(Path example) {
    Manifest m = ManifestLoader.load(example);

    // A runner finds backend capsule:<name> as the folder <name>, so examples keep them equal.
    assertEquals(example.getFileName().toString(), m.name());
  }

  @Test
  void theHelloExampleIsAValidCapsule() {
    Path hello = Examples.dir("hello");

    Manifest m = ManifestLoader.load(hello);

    assertEquals("hello", m.name());
    assertEquals(new ArtifactSource.Builtin("jsonl"), m.driverArtifact().source());
    assertEquals(List.of("HOME", "PATH"), m.capabilities().env().allow());
    assertTrue(m.inference().systemPrompt().orElseThrow().contains("greeter"));
    assertEquals(List.of(), m.warnings());
    Path command = Path.of(m.resolvedCommand().orElseThrow());
    assertTrue(command.startsWith(m.capsuleDir()), command::toString);
    assertTrue(Files.isExecutable(command), command + " must be executable");
  }
}
