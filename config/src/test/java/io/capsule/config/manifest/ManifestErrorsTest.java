package io.capsule.config.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every kind of manifest error, each with its code, key path, line and column. */
class ManifestErrorsTest {

  /** A valid manifest (6 lines) that rows extend; on its own it has no errors. */
  static final String BASE =
      """
      name: t
      version: 1.0.0
      artifacts:
        - {name: d, version: 1.0.0, runtime: driver, builtin: jsonl}
      inference:
        driver: {artifact: d}
      """;

  static final String HEAD =
      """
      name: t
      version: 1.0.0
      artifacts:
        - {name: d, version: 1.0.0, runtime: driver, builtin: jsonl}
      """;

  @TempDir Path capsule;

  static Stream<Arguments> oneErrorManifests() {
    return Stream.of(
        row("a list is not a manifest", Code.E_MAN_001, "", "§- just\n- a list\n"),
        row("broken YAML", Code.E_MAN_001, "", "name: [unclosed\nversion§: 1\n"),
        row("an empty file", Code.E_MAN_001, "", "§"),
        row("tabs are not YAML indentation", Code.E_MAN_001, "", "name: t\n§\tversion: x\n"),
        row("two documents", Code.E_MAN_001, "", BASE + "---\n§name: u\n"),
        row("unknown top-level key", Code.E_MAN_002, "colour", BASE + "§colour: red\n"),
        row(
            "duplicate key",
            Code.E_MAN_002,
            "name",
            "name: t\n§name: u\n" + BASE.substring(BASE.indexOf("version"))),
        row(
            "an alias",
            Code.E_MAN_002,
            "inference.model",
            BASE.replace("name: t", "name: &n t") + "  model: §*n\n"),
        row(
            "missing name points at the top mapping",
            Code.E_MAN_002,
            "name",
            "§" + BASE.substring(BASE.indexOf("version"))),
        row("bad name", Code.E_MAN_002, "name", BASE.replace("name: t", "name: §Hello_World")),
        row("name is a number", Code.E_MAN_002, "name", BASE.replace("name: t", "name: §42")),
        row(
            "version is not semver",
            Code.E_MAN_002,
            "version",
            BASE.replace("version: 1.0.0\nartifacts", "version: §1.0.x\nartifacts")),
        row(
            "description must be text",
            Code.E_MAN_002,
            "description",
            BASE + "description: §[a, b]\n"),
        row(
            "artifact runtime outside its enum",
            Code.E_MAN_002,
            "artifacts[0].runtime",
            BASE.replace("runtime: driver", "runtime: §engine")),
        row(
            "artifact with both path and builtin",
            Code.E_MAN_002,
            "artifacts[0].builtin",
            BASE.replace("builtin: jsonl", "path: d.wasm, §builtin: jsonl")),
        row(
            "artifact with neither path nor builtin",
            Code.E_MAN_002,
            "artifacts[0]",
            BASE.replace(
                "  - {name: d, version: 1.0.0, runtime: driver, builtin: jsonl}",
                "  - §{name: d, version: 1.0.0, runtime: driver}")),
        row(
            "sha256 that is not 64 hex",
            Code.E_MAN_002,
            "artifacts[0].sha256",
            BASE.replace("builtin: jsonl", "builtin: jsonl, sha256: §abc")),
        row(
            "artifact version not semver",
            Code.E_MAN_002,
            "artifacts[0].version",
            BASE.replace("d, version: 1.0.0", "d, version: §latest")),
        row(
            "two artifacts with one name",
            Code.E_MAN_002,
            "artifacts[1].name",
            HEAD
                + "  - {name: §d, version: 1.0.0, runtime: tool, builtin: jq}\n"
                + "inference:\n  driver: {artifact: d}\n"),
        row(
            "an artifact that is not a mapping",
            Code.E_MAN_002,
            "artifacts[1]",
            HEAD + "  - §jsonl\ninference:\n  driver: {artifact: d}\n"),
        row(
            "transport other than process",
            Code.E_MAN_002,
            "inference.transport",
            HEAD + "inference:\n  transport: §grpc\n  driver: {artifact: d}\n"),
        row(
            "driver naming no artifact",
            Code.E_MAN_002,
            "inference.driver.artifact",
            HEAD + "inference:\n  driver: {artifact: §nope}\n"),
        row(
            "driver naming a tool artifact",
            Code.E_MAN_002,
            "inference.driver.artifact",
            BASE.replace("runtime: driver", "runtime: tool")
                .replace("{artifact: d}", "{artifact: §d}")),
        row(
            "missing driver points at inference",
            Code.E_MAN_002,
            "inference.driver",
            HEAD + "inference:\n  §model: x\n"),
        row("missing inference", Code.E_MAN_002, "inference", "§" + HEAD),
        row(
            "unknown key under inference",
            Code.E_MAN_002,
            "inference.temperature",
            BASE + "  §temperature: 0.2\n"),
        row(
            "negative max_turns",
            Code.E_MAN_002,
            "inference.max_turns",
            BASE + "  max_turns: §-1\n"),
        row(
            "max_turns beyond u32",
            Code.E_MAN_002,
            "inference.max_turns",
            BASE + "  max_turns: §4294967296\n"),
        row(
            "max_turns as text",
            Code.E_MAN_002,
            "inference.max_turns",
            BASE + "  max_turns: §ten\n"),
        row(
            "max_session_tokens beyond u64",
            Code.E_MAN_002,
            "inference.max_session_tokens",
            BASE + "  max_session_tokens: §18446744073709551616\n"),
        row(
            "system_prompt and system_prompt_file together",
            Code.E_MAN_002,
            "inference.system_prompt_file",
            BASE + "  system_prompt: hi\n  §system_prompt_file: p.md\n"),
        row(
            "system_prompt_file that does not exist",
            Code.E_MAN_002,
            "inference.system_prompt_file",
            BASE + "  system_prompt_file: §absent.md\n"),
        row("blank command", Code.E_MAN_002, "inference.command", BASE + "  command: §\"  \"\n"),
        row("empty quoted command", Code.E_MAN_002, "inference.command", BASE + "  command: §''\n"),
        row(
            "artifact path leaving through ..",
            Code.E_MAN_003,
            "artifacts[0].path",
            BASE.replace("builtin: jsonl", "path: §../d.wasm")),
        row(
            "absolute artifact path",
            Code.E_MAN_003,
            "artifacts[0].path",
            BASE.replace("builtin: jsonl", "path: §/opt/d.wasm")),
        row(
            "system_prompt_file leaving through ..",
            Code.E_MAN_003,
            "inference.system_prompt_file",
            BASE + "  system_prompt_file: §prompts/../../../etc/passwd\n"),
        row(
            "relative command leaving through ..",
            Code.E_MAN_003,
            "inference.command",
            BASE + "  command: §../outside/run.sh\n"),
        row(
            "credential-shaped env name",
            Code.E_CAP_016,
            "capabilities.env.allow[1]",
            BASE + "capabilities:\n  env:\n    allow: [HOME, §OPENAI_API_KEY]\n"),
        row(
            "env name that is not a name",
            Code.E_MAN_002,
            "capabilities.env.allow[0]",
            BASE + "capabilities:\n  env:\n    allow: [§1ABC]\n"),
        row(
            "env allow that is not a list",
            Code.E_MAN_002,
            "capabilities.env.allow",
            BASE + "capabilities:\n  env:\n    allow: §HOME\n"),
        row(
            "unknown key under env",
            Code.E_MAN_002,
            "capabilities.env.deny",
            BASE + "capabilities:\n  env:\n    §deny: [X]\n"),
        row(
            "capabilities that is a list",
            Code.E_MAN_002,
            "capabilities",
            BASE + "capabilities: §[env]\n"),
        row(
            "network port out of range",
            Code.E_MAN_002,
            "capabilities.network.allow[1]",
            BASE + "capabilities:\n  network:\n    allow: [a.com, §api.example.com:99999]\n"),
        row(
            "network entry with a scheme",
            Code.E_MAN_002,
            "capabilities.network.allow[0]",
            BASE + "capabilities:\n  network:\n    allow: [§http//x.com]\n"),
        row(
            "relative harness path",
            Code.E_MAN_002,
            "capabilities.harness.paths[0].path",
            BASE
                + "capabilities:\n  harness:\n    paths:\n      - {path: §rel/dir, access: read}\n"),
        row(
            "harness access outside its enum",
            Code.E_MAN_002,
            "capabilities.harness.paths[0].access",
            BASE + "capabilities:\n  harness:\n    paths:\n      - {path: ~/.x, access: §write}\n"),
        row(
            "harness entry without a path",
            Code.E_MAN_002,
            "capabilities.harness.paths[0].path",
            BASE + "capabilities:\n  harness:\n    paths:\n      - §{access: read}\n"),
        row(
            "shell tool given as a path",
            Code.E_MAN_002,
            "capabilities.shell.allow[0]",
            BASE + "capabilities:\n  shell:\n    allow: [§/bin/git]\n"),
        row(
            "read_only that is not a boolean",
            Code.E_MAN_002,
            "capabilities.filesystem.read_only",
            BASE + "capabilities:\n  filesystem:\n    read_only: §maybe\n"),
        row(
            "conversation outside its enum",
            Code.E_MAN_002,
            "lifecycle.conversation",
            BASE + "lifecycle:\n  conversation: §forever\n"));
  }

  private static Arguments row(String why, Code code, String key, String marked) {
    return Arguments.of(why, code, key, Marked.of(marked));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("oneErrorManifests")
  void eachProblemIsReportedWithItsCodeKeyLineAndColumn(
      String why, Code code, String key, Marked yaml) {
    ManifestInvalid invalid =
        assertThrows(
            ManifestInvalid.class, () -> ManifestLoader.parse(yaml.text(), capsule, "m.yaml"));

    assertEquals(1, invalid.diagnostics().size(), () -> why + ": " + invalid.render());
    Diagnostic d = invalid.diagnostic();
    assertEquals(code, d.code(), d::render);
    assertEquals("m.yaml", d.details().get("file"));
    assertEquals(key.isEmpty() ? null : key, d.details().get("key"), d::render);
    assertEquals(String.valueOf(yaml.line()), d.details().get("line"), d::render);
    assertEquals(String.valueOf(yaml.column()), d.details().get("column"), d::render);
    assertTrue(d.message().length() > 10 && !d.message().contains("\n"), d::render);
  }

  @ParameterizedTest(name = "{0} → did you mean ''{1}''")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      textBlock =
          """
          max_turn       | max_turns
          sytem_prompt   | system_prompt
          modle          | model
          """)
  void aMisspeltKeyIsAnsweredWithTheKeyItProbablyMeant(String typo, String meant) {
    ManifestInvalid invalid =
        assertThrows(
            ManifestInvalid.class,
            () -> ManifestLoader.parse(BASE + "  " + typo + ": 3\n", capsule, "m.yaml"));
    String message = invalid.diagnostic().message();
    assertTrue(message.contains("did you mean '" + meant + "'?"), message);
  }

  @org.junit.jupiter.api.Test
  void anUnrelatedKeyGetsNoGuessButTheList() {
    ManifestInvalid invalid =
        assertThrows(
            ManifestInvalid.class,
            () -> ManifestLoader.parse(BASE + "  temperature: 0.2\n", capsule, "m.yaml"));
    String message = invalid.diagnostic().message();
    assertTrue(!message.contains("did you mean") && message.contains("expected one of"), message);
  }

  @org.junit.jupiter.api.Test
  void theBaseOfTheTableIsValid() {
    Manifest m = ManifestLoader.parse(BASE, capsule, "m.yaml");
    assertEquals("t", m.name());
    assertEquals(List.of(), m.warnings());
  }
}
