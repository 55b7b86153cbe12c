package io.capsule.hub;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.diag.DidYouMean;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.schema.Schemas;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The body of {@code POST /v1/tasks}, checked whole before the hub does anything with it: every key
 * known (an unknown one is refused with the closest known key), every field against the protocol's
 * schemas ({@code task-spec.json} for the task, {@code invocation.json} for model, session, budget
 * and allowed tools), and every name that ends up in an SSE line or a URL path (capsule, runner,
 * role, a client-given task id) free of control characters. A task that would only fail at the
 * runner is refused here, with every problem at once and its JSON path.
 *
 * <p>Two shapes: short, {@code {"capsule": C, "goal": G}} with optional {@code id}, {@code type},
 * {@code body}; or full, {@code {"capsule": C, "task": TaskSpec}}. Both take {@code runner}, {@code
 * role}, {@code model}, {@code session}, {@code budget} ({@code max_turns}, {@code max_tokens}) and
 * {@code allowed_tools}. Pure: no I/O but the schema files on the classpath.
 */
record TaskRequest(
    String capsule, Optional<String> runner, String role, TaskSpec spec, Invocation invocation) {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Longest capsule, runner, role or task id; they are echoed in headers, paths and logs. */
  static final int MAX_NAME = 200;

  /** The keys of the short and full shapes (the full one takes "task" instead of the four). */
  private static final Set<String> COMMON =
      Set.of("capsule", "runner", "role", "model", "session", "budget", "allowed_tools");

  private static final Set<String> SHORT = Set.of("goal", "id", "type", "body");

  /**
   * Words people write for a known key that spelling distance would not find. {@code task} as text
   * is the case issue #18 found: it was ignored and the missing goal blamed instead.
   */
  private static final Map<String, String> SYNONYMS =
      Map.of(
          "task", "goal",
          "prompt", "goal",
          "text", "goal",
          "description", "goal",
          "backend", "capsule",
          "max_turns", "budget",
          "max_tokens", "budget",
          "tools", "allowed_tools");

  /** The properties the protocol's schemas declare, read from the schema files themselves. */
  private static final Set<String> TASK_KEYS = properties(Schemas.Id.TASK_SPEC, "");

  private static final Set<String> BUDGET_KEYS = properties(Schemas.Id.INVOCATION, "budget");

  /**
   * Parses and checks {@code body}; {@code newId} names a task that gives no id.
   *
   * @throws DiagnosticException {@code E-PRO-001} when the body is not a JSON object, {@code
   *     E-PRO-004} with every problem ({@code "$.path: what"}, sorted) otherwise
   */
  static TaskRequest parse(String body, Supplier<String> newId) {
    JsonNode req;
    try {
      req = JSON.readTree(body);
    } catch (JsonProcessingException e) {
      throw refused(Code.E_PRO_001, List.of("$: the body is not JSON: " + e.getOriginalMessage()));
    }
    if (req == null || !req.isObject()) {
      throw refused(Code.E_PRO_001, List.of("$: the body must be a JSON object"));
    }
    List<String> errors = new ArrayList<>();
    boolean full = req.has("task") && req.get("task").isObject();
    Set<String> allowed = new TreeSet<>(COMMON);
    // With a full task the short keys are refused by fullSpec(), with a better message.
    allowed.addAll(SHORT);
    if (full) {
      allowed.add("task");
    }
    unknownKeys(req, "$", allowed, errors);

    String capsule = name(req, "capsule", true, errors);
    Optional<String> runner = Optional.ofNullable(name(req, "runner", false, errors));
    String role = Optional.ofNullable(name(req, "role", false, errors)).orElse("agent");

    TaskSpec spec = full ? fullSpec(req, errors) : shortSpec(req, newId, errors);
    Invocation invocation = invocation(req, capsule, errors);
    if (!errors.isEmpty()) {
      throw refused(Code.E_PRO_004, errors);
    }
    return new TaskRequest(capsule, runner, role, spec, invocation);
  }

  private static TaskSpec fullSpec(JsonNode req, List<String> errors) {
    ObjectNode task = (ObjectNode) req.get("task");
    for (String key : SHORT) {
      if (req.has(key)) {
        errors.add("$." + key + ": give it inside \"task\" when \"task\" is given");
      }
    }
    unknownKeys(task, "$.task", TASK_KEYS, errors);
    List<String> schema = Schemas.validate(Schemas.Id.TASK_SPEC, task);
    schema.forEach(e -> errors.add(rebase(e, "$.task")));
    if (task.path("id").isTextual()) {
      pathSafe("$.task.id", task.get("id").asText(), errors);
    }
    return schema.isEmpty() ? TaskSpec.of(task) : null;
  }

  private static TaskSpec shortSpec(JsonNode req, Supplier<String> newId, List<String> errors) {
    if (!req.has("goal")) {
      errors.add("$.goal: required (the task's text), or a whole TaskSpec as \"task\"");
    }
    String id = text(req, "id", errors);
    if (id != null) {
      pathSafe("$.id", id, errors);
    }
    String goal = text(req, "goal", errors);
    String type = text(req, "type", errors);
    String body = text(req, "body", errors);
    // Checked as the builder would build it, so a bad field is an error here, not a throw there.
    ObjectNode candidate = JSON.createObjectNode();
    candidate.put("schema_version", 1);
    candidate.put("id", id == null ? newId.get() : id);
    candidate.put("type", type == null ? "capsule" : type);
    candidate.put("goal", goal == null ? "" : goal);
    candidate.putArray("criteria");
    candidate.putObject("budget").put("iterations", 0);
    if (body != null) {
      candidate.put("body", body);
    }
    // Only what the client gave can be wrong: a missing goal or a wrong type is reported above.
    List<String> schema =
        Schemas.validate(Schemas.Id.TASK_SPEC, candidate).stream()
            .filter(e -> req.path(keyOf(e)).isTextual())
            .toList();
    errors.addAll(schema);
    if (!errors.isEmpty()) {
      return null;
    }
    TaskSpec.Builder b =
        TaskSpec.builder(candidate.get("id").asText(), candidate.get("type").asText(), goal);
    if (body != null) {
      b.body(body);
    }
    return b.build();
  }

  private static Invocation invocation(JsonNode req, String capsule, List<String> errors) {
    ObjectNode inv = JSON.createObjectNode();
    inv.put("backend", "capsule:" + (capsule == null ? "" : capsule));
    for (String key : List.of("model", "session", "budget", "allowed_tools")) {
      if (req.has(key)) {
        inv.set(key, req.get(key));
      }
    }
    if (req.path("budget").isObject()) {
      unknownKeys(req.get("budget"), "$.budget", BUDGET_KEYS, errors);
    }
    // backend is built from the capsule, whose own errors are reported by name().
    Schemas.validate(Schemas.Id.INVOCATION, inv).stream()
        .filter(e -> !e.startsWith("$.backend"))
        .forEach(errors::add);
    return Invocation.wrap(inv);
  }

  /** A string field; null when absent; an error when present but not a string. */
  private static String text(JsonNode req, String key, List<String> errors) {
    JsonNode v = req.get(key);
    if (v == null) {
      return null;
    }
    if (!v.isTextual()) {
      errors.add("$." + key + ": " + kind(v) + " found, string expected");
      return null;
    }
    return v.asText();
  }

  /**
   * A name that reaches an SSE line, a URL or a log: a non-empty string of at most {@link
   * #MAX_NAME} characters without control characters.
   */
  private static String name(JsonNode req, String key, boolean required, List<String> errors) {
    if (required && !req.has(key)) {
      errors.add("$." + key + ": required (a capsule name, as the runners' folders are named)");
      return null;
    }
    String v = text(req, key, errors);
    if (v == null) {
      return null;
    }
    if (v.isEmpty()) {
      errors.add("$." + key + ": must not be empty");
    } else if (v.length() > MAX_NAME) {
      errors.add("$." + key + ": longer than " + MAX_NAME + " characters");
    } else {
      control("$." + key, v, errors);
    }
    return v;
  }

  /**
   * A task id becomes a path segment ({@code /v1/tasks/{id}}): nothing that would split it. Nor may
   * it end like the id a runner sees for a later attempt of another task ({@link
   * io.capsule.hub.placement.Attempt}).
   */
  private static void pathSafe(String path, String id, List<String> errors) {
    if (id.length() > MAX_NAME) {
      errors.add(path + ": longer than " + MAX_NAME + " characters");
    } else if (io.capsule.hub.placement.Attempt.isReserved(id)) {
      errors.add(
          path
              + ": an id ending in '"
              + io.capsule.hub.placement.Attempt.MARK
              + "' and digits is how the hub names a task's later attempts to a runner; choose"
              + " another");
    } else if (!control(path, id, errors)) {
      for (char c : id.toCharArray()) {
        if (Character.isWhitespace(c) || "/?#%\\".indexOf(c) >= 0) {
          errors.add(
              path + ": " + describe(c) + " cannot be in a task id (it is a URL path segment)");
          return;
        }
      }
    }
  }

  /** Adds an error and answers true when {@code v} holds a control or line-separator character. */
  private static boolean control(String path, String v, List<String> errors) {
    for (char c : v.toCharArray()) {
      if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
        errors.add(path + ": " + describe(c) + " is a control character; names must be printable");
        return true;
      }
    }
    return false;
  }

  private static String describe(char c) {
    return String.format("U+%04X", (int) c) + (c > ' ' && c < 0x7f ? " '" + c + "'" : "");
  }

  private static void unknownKeys(
      JsonNode node, String at, Set<String> known, List<String> errors) {
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!known.contains(key)) {
        String msg = at + "." + key + ": unknown key";
        Optional<String> guess = didYouMean(key, known);
        errors.add(
            guess.map(g -> msg + "; did you mean \"" + g + "\"?").orElse(msg + knownList(known)));
      }
    }
  }

  private static String knownList(Set<String> known) {
    return "; known keys: " + String.join(", ", new TreeSet<>(known));
  }

  /** The known key closest to {@code key}: a synonym, or one a couple of edits away. */
  static Optional<String> didYouMean(String key, Set<String> known) {
    String synonym = SYNONYMS.get(key.toLowerCase(java.util.Locale.ROOT));
    if (synonym != null && known.contains(synonym)) {
      return Optional.of(synonym);
    }
    // The same closeness as manifests and settings (two edits for short keys).
    return DidYouMean.closest(key, known);
  }

  private static String kind(JsonNode v) {
    return switch (v.getNodeType()) {
      case NUMBER -> "number";
      case BOOLEAN -> "boolean";
      case ARRAY -> "array";
      case OBJECT -> "object";
      case NULL -> "null";
      default -> v.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    };
  }

  /** {@code "$.goal: …"} → {@code "goal"}: the top-level key a schema error is about. */
  private static String keyOf(String error) {
    String rest = error.startsWith("$.") ? error.substring(2) : error;
    int end = 0;
    while (end < rest.length()
        && rest.charAt(end) != '.'
        && rest.charAt(end) != ':'
        && rest.charAt(end) != '[') {
      end++;
    }
    return rest.substring(0, end);
  }

  /** A schema error about the task alone ({@code $.goal: …}) as a path in the body. */
  private static String rebase(String error, String at) {
    return error.startsWith("$") ? at + error.substring(1) : at + ": " + error;
  }

  private static DiagnosticException refused(Code code, List<String> errors) {
    List<String> sorted = errors.stream().sorted().distinct().toList();
    return new DiagnosticException(
        Diagnostic.of(code, "the task request is invalid: " + String.join("; ", sorted)));
  }

  /** The property names a schema declares at {@code under} ("" for the top). */
  private static Set<String> properties(Schemas.Id id, String under) {
    try (InputStream in =
        TaskRequest.class.getClassLoader().getResourceAsStream("schemas/" + id.file())) {
      if (in == null) {
        throw new IllegalStateException("schema " + id.file() + " is not on the classpath");
      }
      JsonNode schema = JSON.readTree(in);
      JsonNode props =
          under.isEmpty()
              ? schema.path("properties")
              : schema.path("properties").path(under).path("properties");
      Set<String> out = new TreeSet<>();
      props.fieldNames().forEachRemaining(out::add);
      return Set.copyOf(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
