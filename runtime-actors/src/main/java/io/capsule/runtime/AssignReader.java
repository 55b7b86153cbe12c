package io.capsule.runtime;

import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * How a runner reads {@code task.assign} (docs/runner-protocol.md): {@code invocation.backend =
 * capsule:NAME} names the folder {@code NAME} in the runner's capsules directory; {@code model}
 * replaces the manifest's when non-empty; {@code session} is the conversation key; the budget
 * tightens the manifest's ceilings (the run applies "never loosens"); {@code allowed_tools}, when
 * present (even empty), narrows the capsule's tools (the run applies "never widens"); the task text
 * is the goal, then the body, then the criteria as a list. Pure apart from one directory lookup.
 */
public final class AssignReader {
  /** A capsule name as the manifest allows it; anything else cannot be a folder of ours. */
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  private final Path capsulesDir;

  public AssignReader(Path capsulesDir) {
    this.capsulesDir = capsulesDir.toAbsolutePath().normalize();
  }

  /** The run to start, or empty when the backend names no capsule of this runner. */
  public Optional<RunRequest> read(TaskAssign assign) {
    Invocation inv = assign.invocation();
    String backend = inv.backend();
    if (!backend.startsWith("capsule:")) {
      return Optional.empty();
    }
    String name = backend.substring("capsule:".length());
    Path dir = capsulesDir.resolve(name);
    if (!NAME.matcher(name).matches() || !Files.isRegularFile(dir.resolve("murmur.yaml"))) {
      return Optional.empty();
    }
    return Optional.of(
        new RunRequest(
            assign.task().id(),
            new CapsuleRef.Folder(dir.toString()),
            taskText(assign.task()),
            inv.session().filter(s -> !s.isBlank()),
            inv.model().filter(m -> !m.isBlank()),
            positive(inv.maxTurns()),
            positive(inv.maxTokens()),
            Optional.empty(),
            inv.hasAllowedTools() ? Optional.of(inv.allowedTools()) : Optional.empty()));
  }

  /** The goal, then the body, then each criterion as {@code - id: text}. */
  public static String taskText(TaskSpec task) {
    StringBuilder text = new StringBuilder(task.goal());
    task.body().filter(b -> !b.isBlank()).ifPresent(b -> text.append("\n\n").append(b));
    if (!task.criteria().isEmpty()) {
      text.append("\n");
      for (TaskSpec.Criterion c : task.criteria()) {
        text.append("\n- ").append(c.id()).append(": ").append(c.text());
      }
    }
    return text.toString();
  }

  private static OptionalLong positive(OptionalLong v) {
    return v.isPresent() && v.getAsLong() >= 0 ? v : OptionalLong.empty();
  }
}
