package io.capsule.runtime.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Diagnostic;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How {@code task.assign} becomes a {@link RunRequest} (docs/runner-protocol.md). */
class AssignReaderTest {

  @TempDir Path capsules;
  private AssignReader reader;

  @BeforeEach
  void aCapsuleNamedHello() throws IOException {
    Files.createDirectories(capsules.resolve("hello"));
    Files.writeString(capsules.resolve("hello/murmur.yaml"), "");
    reader = new AssignReader(capsules);
  }

  private static TaskAssign assign(Invocation.Builder invocation) {
    return new TaskAssign(
        TaskSpec.builder("t1", "chore", "Say hi").build(), "worker", invocation.build());
  }

  @Test
  void absentAllowedToolsNarrowsNothing() {
    RunRequest r = accepted(assign(Invocation.builder("capsule:hello")));

    assertEquals(Optional.empty(), r.allowedTools());
    assertEquals(new CapsuleRef.Folder(capsules.resolve("hello").toString()), r.capsule());
  }

  @Test
  void allowedToolsAreCarriedAsTheRequestsNarrowing() {
    RunRequest r =
        accepted(assign(Invocation.builder("capsule:hello").allowedTools(List.of("echo", "cat"))));

    assertEquals(Optional.of(List.of("echo", "cat")), r.allowedTools());
  }

  @Test
  void anEmptyAllowedToolsListMeansNoToolsNotNoNarrowing() {
    RunRequest r = accepted(assign(Invocation.builder("capsule:hello").allowedTools(List.of())));

    assertEquals(Optional.of(List.of()), r.allowedTools());
  }

  @Test
  void modelSessionAndBudgetAreMapped() {
    RunRequest r =
        accepted(
            assign(
                Invocation.builder("capsule:hello")
                    .model("m1")
                    .session("conv-1")
                    .budget(3L, null)));

    assertEquals(Optional.of("m1"), r.model());
    assertEquals(Optional.of("conv-1"), r.conversation());
    assertEquals(OptionalLong.of(3), r.maxTurns());
    assertEquals(OptionalLong.empty(), r.maxTokens());
  }

  private RunRequest accepted(TaskAssign a) {
    return ((AssignReader.Accepted) reader.read(a)).request();
  }

  /** The code of a refused assignment; fails when it was accepted. */
  private String refusedCode(Invocation.Builder invocation) {
    AssignReader.Reading r = reader.read(assign(invocation));
    assertInstanceOf(AssignReader.Refused.class, r, "accepted: " + r);
    Diagnostic d = ((AssignReader.Refused) r).diagnostic();
    assertFalse(d.message().chars().anyMatch(Character::isISOControl), d.message());
    assertTrue(d.message().length() < 300, "the message quotes a cut: " + d.message().length());
    return d.code().id();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          a capsule this runner does not have    | capsule:absent        | E-RUN-006
          another kind of backend                | openai:gpt            | E-RUN-006
          a parent directory                     | capsule:../hello      | E-RUN-041
          an absolute path                       | capsule:/etc          | E-RUN-041
          upper case                             | capsule:Hello         | E-RUN-041
          an empty name                          | capsule:              | E-RUN-041
          """)
  void aBackendThatNamesNoCapsuleOfThisRunnerIsRefusedWithItsCode(
      String why, String backend, String code) {
    assertEquals(code, refusedCode(Invocation.builder(backend)), why);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          task.budget.iterations a string  | task       | budget     | {"iterations":"many"}
          task.budget an array             | task       | budget     | [1]
          task.goal a number               | task       | goal       | 7
          invocation.budget.max_turns text | invocation | budget     | {"max_turns":"ten"}
          invocation.model a number        | invocation | model      | 3
          invocation.allowed_tools a text  | invocation | allowed_tools | "echo"
          """)
  void aWrongTypedFieldIsRefusedWithItsPathNotDropped(
      String why, String body, String key, String value) throws IOException {
    ObjectNode task = TaskSpec.builder("t1", "chore", "Say hi").build().json();
    ObjectNode inv = Invocation.builder("capsule:hello").build().json();
    JsonNode bad = new ObjectMapper().readTree(value);
    (body.equals("task") ? task : inv).set(key, bad);

    AssignReader.Reading r =
        reader.read(new TaskAssign(TaskSpec.wrap(task), "worker", Invocation.wrap(inv)));

    Diagnostic d = assertInstanceOf(AssignReader.Refused.class, r, why).diagnostic();
    assertEquals("E-RUN-041", d.code().id(), why);
    assertTrue(d.message().contains(body + "." + key), why + ": " + d.message());
  }

  @Test
  void aNameWithANulIsRefusedBeforeItBecomesAPath() {
    // This threw InvalidPathException from Path.resolve and stopped the runner's task handler.
    assertEquals("E-RUN-041", refusedCode(Invocation.builder("capsule:hel\u0000lo")));
  }

  @Test
  void aNameWithANewlineOrTenKilobytesIsRefused() {
    assertEquals("E-RUN-041", refusedCode(Invocation.builder("capsule:hello\nworld")));
    assertEquals("E-RUN-041", refusedCode(Invocation.builder("capsule:" + "a".repeat(10_240))));
  }

  @Test
  void aModelOrSessionWithControlCharactersOrTooLongIsRefused() {
    assertEquals("E-RUN-041", refusedCode(Invocation.builder("capsule:hello").model("m\u0000")));
    assertEquals("E-RUN-041", refusedCode(Invocation.builder("capsule:hello").session("a\nb")));
    assertEquals(
        "E-RUN-041",
        refusedCode(
            Invocation.builder("capsule:hello").model("m".repeat(AssignReader.MAX_FIELD + 1))));
  }
}
