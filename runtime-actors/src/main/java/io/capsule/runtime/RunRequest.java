package io.capsule.runtime;

import io.capsule.runtime.run.CapsuleRun;
import java.util.List;
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
 * @param allowedTools narrows the capsule's bridged tools ({@code capabilities.shell.allow}) to
 *     these names ({@code invocation.allowed_tools}); it never widens. Empty: no narrowing, every
 *     tool of the capsule is offered. An empty list: no tool is offered (and no bridge started). A
 *     name the capsule does not have is ignored, with a warning {@code W-TOOL-010}.
 * @param nodeLossRetries how many times a sharded run ({@code CapsuleSharding}) starts again on
 *     another runner node when the node hosting it is lost; 0 (the default): a lost node ends the
 *     run failed with {@code E-CLU-001}. Ignored by a run started on its own node.
 */
public record RunRequest(
    String taskId,
    CapsuleRef capsule,
    String task,
    Optional<String> conversation,
    Optional<String> model,
    OptionalLong maxTurns,
    OptionalLong maxTokens,
    Optional<String> workdir,
    Optional<List<String>> allowedTools,
    int nodeLossRetries)
    implements CapsuleSerializable {

  /** The most retries a request may ask for: each one costs a whole run again. */
  public static final int MAX_NODE_LOSS_RETRIES = 100;

  public RunRequest {
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(capsule, "capsule");
    Objects.requireNonNull(task, "task");
    Objects.requireNonNull(conversation, "conversation");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(maxTurns, "maxTurns");
    Objects.requireNonNull(maxTokens, "maxTokens");
    Objects.requireNonNull(workdir, "workdir");
    Objects.requireNonNull(allowedTools, "allowedTools");
    allowedTools = allowedTools.map(List::copyOf); // immutable; refuses null names
    if (nodeLossRetries < 0 || nodeLossRetries > MAX_NODE_LOSS_RETRIES) {
      throw new IllegalArgumentException(
          "nodeLossRetries must be 0.." + MAX_NODE_LOSS_RETRIES + ", got " + nodeLossRetries);
    }
  }

  /** A request that is not retried on node loss (the form before {@code nodeLossRetries}). */
  public RunRequest(
      String taskId,
      CapsuleRef capsule,
      String task,
      Optional<String> conversation,
      Optional<String> model,
      OptionalLong maxTurns,
      OptionalLong maxTokens,
      Optional<String> workdir,
      Optional<List<String>> allowedTools) {
    this(taskId, capsule, task, conversation, model, maxTurns, maxTokens, workdir, allowedTools, 0);
  }

  /** A request with no tool narrowing (the form before {@code allowedTools} existed). */
  public RunRequest(
      String taskId,
      CapsuleRef capsule,
      String task,
      Optional<String> conversation,
      Optional<String> model,
      OptionalLong maxTurns,
      OptionalLong maxTokens,
      Optional<String> workdir) {
    this(
        taskId, capsule, task, conversation, model, maxTurns, maxTokens, workdir, Optional.empty());
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
        Optional.empty(),
        Optional.empty());
  }

  public RunRequest withConversation(String key) {
    return new RunRequest(
        taskId,
        capsule,
        task,
        Optional.of(key),
        model,
        maxTurns,
        maxTokens,
        workdir,
        allowedTools,
        nodeLossRetries);
  }

  public RunRequest withWorkdir(String dir) {
    return new RunRequest(
        taskId,
        capsule,
        task,
        conversation,
        model,
        maxTurns,
        maxTokens,
        Optional.of(dir),
        allowedTools,
        nodeLossRetries);
  }

  public RunRequest withBudget(OptionalLong turns, OptionalLong tokens) {
    return new RunRequest(
        taskId,
        capsule,
        task,
        conversation,
        model,
        turns,
        tokens,
        workdir,
        allowedTools,
        nodeLossRetries);
  }

  /**
   * Offers only these of the capsule's tools (see {@code allowedTools}); an empty list offers none.
   */
  public RunRequest withAllowedTools(List<String> tools) {
    return new RunRequest(
        taskId,
        capsule,
        task,
        conversation,
        model,
        maxTurns,
        maxTokens,
        workdir,
        Optional.of(List.copyOf(tools)),
        nodeLossRetries);
  }

  /**
   * When the node hosting this run (sharded with {@code CapsuleSharding}) is lost, starts the run
   * again on another runner node, at most {@code retries} times; the lost attempt's events stay,
   * followed by {@code RunEvent.AttemptLost}, and the caller still gets exactly one outcome.
   */
  public RunRequest retryOnNodeLoss(int retries) {
    return new RunRequest(
        taskId,
        capsule,
        task,
        conversation,
        model,
        maxTurns,
        maxTokens,
        workdir,
        allowedTools,
        retries);
  }
}
