package io.capsule.config.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.config.diag.Code;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Manifests built in memory obey the same rules as files. */
class ManifestBuilderTest {

  @TempDir Path capsule;

  @Test
  void buildsAManifestWithoutAFile() throws IOException {
    Files.writeString(capsule.resolve("prompt.md"), "Be brief.");

    Manifest m =
        Manifest.builder("embedded", "0.1.0")
            .capsuleDir(capsule)
            .description("built in a test")
            .builtinDriver("jsonl", "0.6.0")
            .driverConfig(new ObjectMapper().readTree("{\"mode\":\"fast\"}"))
            .model("m-1")
            .command("/bin/cat")
            .maxTurns(3)
            .maxSessionTokens(1000)
            .systemPromptFile("prompt.md")
            .envAllow("HOME", "PATH")
            .envAllowCredentials("GH_TOKEN")
            .networkAllow("api.example.com:443")
            .harnessPath("~/.cache/x", Access.READ)
            .shellAllow("git")
            .readOnly(true)
            .conversation(Conversation.THREADED)
            .build();

    assertEquals("embedded", m.name());
    assertEquals(new ArtifactSource.Builtin("jsonl"), m.driverArtifact().source());
    assertEquals(Optional.of("{\"mode\":\"fast\"}"), m.inference().driver().configJson());
    assertEquals(Optional.of("m-1"), m.inference().model());
    assertEquals(OptionalLong.of(3), m.inference().maxTurns());
    assertEquals(OptionalLong.of(1000), m.inference().maxSessionTokens());
    assertEquals(Optional.of("Be brief."), m.inference().systemPrompt());
    assertEquals(List.of("HOME", "PATH", "GH_TOKEN"), m.capabilities().env().granted());
    assertTrue(m.capabilities().network().allows(NetworkEntry.parse("api.example.com:443")));
    assertTrue(m.capabilities().harness().allows("~/.cache/x/y", Access.READ));
    assertFalse(m.capabilities().harness().allows("~/.cache/x", Access.READ_WRITE));
    assertEquals(List.of("git"), m.capabilities().shell().allow());
    assertTrue(m.capabilities().filesystem().readOnly());
    assertEquals(Conversation.THREADED, m.lifecycle().conversation());
    assertEquals(Optional.empty(), m.manifestFile());
    assertEquals(List.of(Code.W_SEC_024), m.warnings().stream().map(w -> w.code()).toList());
  }

  @Test
  void anInMemoryManifestIsValidatedWholeAndCarriesNoLines() {
    ManifestInvalid e =
        assertThrows(
            ManifestInvalid.class,
            () ->
                Manifest.builder("Bad Name", "1")
                    .capsuleDir(capsule)
                    .builtinDriver("jsonl", "0.6.0")
                    .envAllow("OPENAI_API_KEY")
                    .build());

    assertEquals(
        List.of("E-MAN-002 name", "E-MAN-002 version", "E-CAP-016 capabilities.env.allow[0]"),
        e.diagnostics().stream().map(d -> d.code() + " " + d.details().get("key")).toList());
    assertTrue(e.diagnostics().stream().noneMatch(d -> d.details().containsKey("line")));
    assertEquals(ManifestBuilder.LABEL, e.diagnostic().details().get("file"));
  }

  @Test
  void aBuilderWithoutADriverIsRefused() {
    ManifestInvalid e =
        assertThrows(ManifestInvalid.class, () -> Manifest.builder("x", "1.0.0").build());

    assertEquals("inference", e.diagnostic().details().get("key"));
  }
}
