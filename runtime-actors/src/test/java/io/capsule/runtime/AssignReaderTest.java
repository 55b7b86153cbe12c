package io.capsule.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    RunRequest r = reader.read(assign(Invocation.builder("capsule:hello"))).orElseThrow();

    assertEquals(Optional.empty(), r.allowedTools());
    assertEquals(new CapsuleRef.Folder(capsules.resolve("hello").toString()), r.capsule());
  }

  @Test
  void allowedToolsAreCarriedAsTheRequestsNarrowing() {
    RunRequest r =
        reader
            .read(assign(Invocation.builder("capsule:hello").allowedTools(List.of("echo", "cat"))))
            .orElseThrow();

    assertEquals(Optional.of(List.of("echo", "cat")), r.allowedTools());
  }

  @Test
  void anEmptyAllowedToolsListMeansNoToolsNotNoNarrowing() {
    RunRequest r =
        reader
            .read(assign(Invocation.builder("capsule:hello").allowedTools(List.of())))
            .orElseThrow();

    assertEquals(Optional.of(List.of()), r.allowedTools());
  }

  @Test
  void modelSessionAndBudgetAreMapped() {
    RunRequest r =
        reader
            .read(
                assign(
                    Invocation.builder("capsule:hello")
                        .model("m1")
                        .session("conv-1")
                        .budget(3L, null)))
            .orElseThrow();

    assertEquals(Optional.of("m1"), r.model());
    assertEquals(Optional.of("conv-1"), r.conversation());
    assertEquals(OptionalLong.of(3), r.maxTurns());
    assertEquals(OptionalLong.empty(), r.maxTokens());
  }

  @Test
  void aBackendThatNamesNoCapsuleOfThisRunnerIsNotRead() {
    assertTrue(reader.read(assign(Invocation.builder("capsule:absent"))).isEmpty());
    assertTrue(reader.read(assign(Invocation.builder("capsule:../hello"))).isEmpty());
    assertTrue(reader.read(assign(Invocation.builder("openai:gpt"))).isEmpty());
  }
}
