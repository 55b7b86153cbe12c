package io.capsule.runtime;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a run is asked to do: the serializable start of a {@link CapsuleRun} (so a run can later be
 * a sharded entity keyed by task id). Node-local things (the driver, settings, dispatchers) are
 * looked up on the node that runs it.
 *
 * @param taskId the task's id; one run per task
 * @param capsule which capsule
 * @param task the task text handed to the driver
 * @param conversation the conversation key a {@code threaded} capsule resumes under ({@code
 *     invocation.session})
 * @param model replaces {@code inference.model} when present and non-blank
 * @param maxTurns tightens {@code inference.max_turns} (never loosens)
 * @param maxTokens tightens {@code inference.max_session_tokens} (never loosens)
 * @param workdir the harness's working directory; the run's own directory when empty
 */
public record RunRequest(
    String taskId,
    CapsuleRef capsule,
    String task,
    Optional<String> conversation,
    Optional<String> model,
    OptionalLong maxTurns,
    OptionalLong maxTokens,
    Optional<String> workdir)
    implements CapsuleSerializable {

  public RunRequest {
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(capsule, "capsule");
    Objects.requireNonNull(task, "task");
    Objects.requireNonNull(conversation, "conversation");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(maxTurns, "maxTurns");
    Objects.requireNonNull(maxTokens, "maxTokens");
    Objects.requireNonNull(workdir, "workdir");
  }

  /** A plain request: this capsule, this task, nothing narrowed. */
  public static RunRequest of(String taskId, CapsuleRef capsule, String task) {
    return new RunRequest(
        taskId,
        capsule,
        task,
        Optional.empty(),
        Optional.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        Optional.empty());
  }

  public RunRequest withConversation(String key) {
    return new RunRequest(
        taskId, capsule, task, Optional.of(key), model, maxTurns, maxTokens, workdir);
  }

  public RunRequest withWorkdir(String dir) {
    return new RunRequest(
        taskId, capsule, task, conversation, model, maxTurns, maxTokens, Optional.of(dir));
  }

  public RunRequest withBudget(OptionalLong turns, OptionalLong tokens) {
    return new RunRequest(taskId, capsule, task, conversation, model, turns, tokens, workdir);
  }
}
