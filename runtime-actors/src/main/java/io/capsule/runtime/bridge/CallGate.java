package io.capsule.runtime.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The gate every {@code tools/call} passes before a process starts, in this order: the tool exists,
 * the input matches its schema, the run is not ending, {@code filesystem.read_only} can be kept,
 * the embedding application's {@link ToolPolicy} allows it. The first failing check refuses the
 * call with its code. Pure: the in-flight limit is counted by the caller after this.
 */
final class CallGate {

  /** Whether and how {@code filesystem.read_only} applies to this bridge's calls. */
  enum ReadOnly {
    /** {@code read_only: false}: tools run in the workdir as it is. */
    NOT_REQUIRED,
    /** {@code read_only: true} and the read-only mount works here: tools run under it. */
    ENFORCED,
    /** {@code read_only: true} but this host cannot make the workdir read-only: fail closed. */
    UNENFORCEABLE
  }

  sealed interface Verdict {}

  /** The call may run: the tool, its arguments and its stdin. */
  record Admitted(ShellTool tool, List<String> args, Optional<String> stdin) implements Verdict {
    Admitted {
      Objects.requireNonNull(tool, "tool");
      args = List.copyOf(args);
      Objects.requireNonNull(stdin, "stdin");
    }
  }

  /** The call is refused; the diagnostic goes to the harness (as text) and to the listener. */
  record Refused(Diagnostic diagnostic) implements Verdict {}

  private final Map<String, ShellTool> tools = new LinkedHashMap<>();
  private final ReadOnly readOnly;
  private final ToolPolicy policy;

  CallGate(List<ShellTool> inventory, ReadOnly readOnly, ToolPolicy policy) {
    inventory.forEach(t -> tools.put(t.name(), t));
    this.readOnly = Objects.requireNonNull(readOnly, "readOnly");
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  Verdict check(String name, JsonNode arguments, boolean ending) {
    ShellTool tool = tools.get(name);
    if (tool == null) {
      return refuse(
          Code.E_TOOL_002, "no tool named '" + shorten(name) + "'; tools: " + tools.keySet());
    }
    List<String> args = new ArrayList<>();
    Optional<String> problem = readInput(arguments, args);
    if (problem.isPresent()) {
      return refuse(Code.E_TOOL_002, "input of '" + name + "' " + problem.get());
    }
    JsonNode stdinNode = arguments.get("stdin");
    Optional<String> stdin = stdinNode == null ? Optional.empty() : Optional.of(stdinNode.asText());
    if (ending) {
      return refuse(Code.E_TOOL_003, "the run is ending; '" + name + "' was not started");
    }
    if (readOnly == ReadOnly.UNENFORCEABLE) {
      return refuse(
          Code.E_TOOL_006,
          "filesystem.read_only is set and this host cannot mount the workdir read-only for"
              + " tools; '"
              + name
              + "' was not started");
    }
    int stdinBytes = stdin.map(s -> s.getBytes(StandardCharsets.UTF_8).length).orElse(0);
    ToolPolicy.Decision decision;
    try {
      decision = policy.decide(new ToolPolicy.Call(name, args, stdinBytes));
    } catch (RuntimeException e) {
      decision = ToolPolicy.Decision.deny("the tool policy failed: " + e);
    }
    if (decision instanceof ToolPolicy.Decision.Deny deny) {
      return refuse(Code.E_TOOL_004, "'" + name + "' denied by the tool policy: " + deny.reason());
    }
    if (decision == null) {
      return refuse(Code.E_TOOL_004, "'" + name + "' denied: the tool policy gave no decision");
    }
    return new Admitted(tool, args, stdin);
  }

  /**
   * Checks {@code arguments} against {@link McpProtocol#inputSchema()} and fills {@code args}.
   * Returns what is wrong, if anything.
   */
  private static Optional<String> readInput(JsonNode arguments, List<String> args) {
    if (arguments == null || !arguments.isObject()) {
      return Optional.of("must be an object with \"args\"");
    }
    for (Iterator<String> it = arguments.fieldNames(); it.hasNext(); ) {
      String field = it.next();
      if (!field.equals("args") && !field.equals("stdin")) {
        return Optional.of("has an unknown field '" + shorten(field) + "'");
      }
    }
    JsonNode list = arguments.get("args");
    if (list == null) {
      return Optional.of("lacks the required \"args\" array");
    }
    if (!list.isArray()) {
      return Optional.of("has \"args\" that is not an array");
    }
    for (int i = 0; i < list.size(); i++) {
      JsonNode arg = list.get(i);
      if (!arg.isTextual()) {
        return Optional.of("has args[" + i + "] that is not a string");
      }
      if (arg.asText().indexOf('\0') >= 0) {
        // a NUL cannot cross execve: the program would see a different, shorter argument
        return Optional.of("has args[" + i + "] containing a NUL character");
      }
      args.add(arg.asText());
    }
    JsonNode stdin = arguments.get("stdin");
    if (stdin != null && !stdin.isTextual()) {
      return Optional.of("has \"stdin\" that is not a string");
    }
    return Optional.empty();
  }

  private static Refused refuse(Code code, String message) {
    return new Refused(Diagnostic.of(code, message));
  }

  /** Names from the client go into messages and traces; keep them short. */
  static String shorten(String s) {
    return s.length() <= 64 ? s : s.substring(0, 64) + "…";
  }
}
