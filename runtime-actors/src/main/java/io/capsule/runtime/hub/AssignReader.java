package io.capsule.runtime.hub;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
// Not final: a test reader that fails on purpose proves HubLink reports such a failure as the
// task's (E-RUN-042) and keeps handling tasks.
public class AssignReader {
  /** A capsule name as the manifest allows it; anything else cannot be a folder of ours. */
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  /**
   * The longest model or session the runner accepts: far above any real model id or conversation
   * key, far below a size that would bloat every progress frame and trace line that quotes it.
   */
  static final int MAX_FIELD = 256;

  /** How much of a refused value a message quotes: enough to recognise it, never all of it. */
  private static final int QUOTE = 64;

  /**
   * How much of the schema's complaint a refusal carries: the first few paths and what they lack,
   * while the report stays far below the frame cap even if the complaint quotes the hub's values.
   */
  private static final int SCHEMA_QUOTE = 512;

  /** What the runner makes of one assignment. */
  public sealed interface Reading {}

  /** A run to start. */
  public record Accepted(RunRequest request) implements Reading {}

  /**
   * No run: the task is reported {@code blocked} at once with this diagnostic ({@code E-RUN-006}
   * for a capsule this runner does not have, {@code E-RUN-041} for a malformed field).
   */
  public record Refused(Diagnostic diagnostic) implements Reading {}

  private final Path capsulesDir;

  public AssignReader(Path capsulesDir) {
    this.capsulesDir = capsulesDir.toAbsolutePath().normalize();
  }

  /**
   * Reads one assignment. Every field is checked before it is used: the capsule name against its
   * pattern before it becomes a path (a NUL, a newline, {@code ../} or a 10 KB name never reach the
   * file system), the model and the session for control characters and length. Never throws for
   * anything the hub can send.
   */
  public Reading read(TaskAssign assign) {
    Optional<Refused> unfit = schemaErrors(assign);
    if (unfit.isPresent()) {
      return unfit.get();
    }
    Invocation inv = assign.invocation();
    String backend = inv.backend();
    if (!backend.startsWith("capsule:")) {
      return new Refused(
          Diagnostic.of(
              Code.E_RUN_006, "this runner has no capsule for backend '" + quote(backend) + "'"));
    }
    String name = backend.substring("capsule:".length());
    if (!NAME.matcher(name).matches()) {
      return new Refused(
          Diagnostic.of(
                  Code.E_RUN_041,
                  "the capsule name '" + quote(name) + "' is not a-z, 0-9 and '-' (at most 64)")
              .with("field", "invocation.backend"));
    }
    Optional<Refused> bad =
        field("invocation.model", inv.model()).or(() -> field("invocation.session", inv.session()));
    if (bad.isPresent()) {
      return bad.get();
    }
    Path dir = capsulesDir.resolve(name);
    if (!Files.isRegularFile(dir.resolve("murmur.yaml"))) {
      return new Refused(
          Diagnostic.of(
              Code.E_RUN_006, "this runner has no capsule for backend '" + backend + "'"));
    }
    return new Accepted(
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

  /**
   * The task and the invocation against their schemas ({@code task-spec.json}, {@code
   * invocation.json}): a field of the wrong type (a budget that is a string, say) reaches here when
   * the client passed the assign on so that the task is refused rather than dropped ({@code
   * Wire.InvalidAssign}). The rest of the frame (role, seq) the client has read already.
   */
  private static Optional<Refused> schemaErrors(TaskAssign assign) {
    List<String> errors = new ArrayList<>();
    assign.task().validate().forEach(e -> errors.add(under("task", e)));
    boolean taskFine = errors.isEmpty();
    assign.invocation().validate().forEach(e -> errors.add(under("invocation", e)));
    if (errors.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        new Refused(
            Diagnostic.of(
                    Code.E_RUN_041,
                    "the assignment does not fit the protocol's schema (E-PRO-004): "
                        + quote(String.join("; ", errors), SCHEMA_QUOTE))
                .with("field", taskFine ? "invocation" : "task")));
  }

  /** A schema complaint about a body ({@code $.budget: …}) as a path in the frame. */
  private static String under(String body, String error) {
    return error.startsWith("$") ? body + error.substring(1) : body + ": " + error;
  }

  private static Optional<Refused> field(String where, Optional<String> value) {
    if (value.isEmpty()) {
      return Optional.empty();
    }
    String v = value.get();
    boolean control = v.chars().anyMatch(Character::isISOControl);
    if (!control && v.length() <= MAX_FIELD) {
      return Optional.empty();
    }
    return Optional.of(
        new Refused(
            Diagnostic.of(
                    Code.E_RUN_041,
                    where
                        + " '"
                        + quote(v)
                        + "' "
                        + (control
                            ? "holds a control character"
                            : "is over " + MAX_FIELD + " characters"))
                .with("field", where)));
  }

  /** A value as a message may show it: control characters escaped, cut to {@value #QUOTE}. */
  static String quote(String v) {
    return quote(v, QUOTE);
  }

  private static String quote(String v, int max) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    for (; i < v.length() && out.length() < max; i++) {
      char c = v.charAt(i);
      out.append(Character.isISOControl(c) ? String.format("\\u%04x", (int) c) : c);
    }
    return i < v.length() || out.length() > max ? out + "…" : out.toString();
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
