package io.capsule.driver.abi;

import static io.capsule.driver.abi.WitType.field;
import static io.capsule.driver.abi.WitType.list;
import static io.capsule.driver.abi.WitType.option;
import static io.capsule.driver.abi.WitType.payloadCase;
import static io.capsule.driver.abi.WitType.record;
import static io.capsule.driver.abi.WitType.unitCase;

import java.util.Optional;

/**
 * The types and functions of {@code murmur:driver/process@0.6.0} in the ABI type model, field by
 * field and case by case in the WIT's declaration order (the order is the layout: never reorder).
 */
public final class ContractTypes {
  private ContractTypes() {}

  /** The exported interface a driver must name exactly. */
  public static final String INTERFACE = "murmur:driver/process@0.6.0";

  static final WitType STRING = Primitive.STRING;
  static final WitType STRINGS = list(Primitive.STRING);
  static final WitType BYTES = list(Primitive.U8);

  public static final EnumType INTERRUPT_METHOD =
      WitType.enumOf("interrupt-method", "stdin-message", "signal-int", "unsupported");
  public static final EnumType PATH_ACCESS = WitType.enumOf("path-access", "read", "read-write");
  public static final RecordType PATH_NEED =
      record("path-need", field("path", STRING), field("access", PATH_ACCESS));
  public static final RecordType HARNESS_NEEDS =
      record("harness-needs", field("paths", list(PATH_NEED)), field("hosts", STRINGS));
  public static final VariantType LOGIN_CHECK =
      WitType.variant(
          "login-check", payloadCase("command", STRINGS), payloadCase("unavailable", STRING));
  public static final RecordType DESCRIPTION =
      record(
          "description",
          field("harness", STRING),
          field("binary", STRING),
          field("version-args", STRINGS),
          field("tested-versions", STRINGS),
          field("interrupt", INTERRUPT_METHOD),
          field("required-env", STRINGS),
          field("streams-text", Primitive.BOOL),
          field("reports-usage", Primitive.BOOL),
          field("login-check", LOGIN_CHECK),
          field("harness-needs", HARNESS_NEEDS));

  public static final RecordType LOGIN_OUTPUT =
      record(
          "login-output",
          field("exit-code", option(Primitive.S32)),
          field("stdout", STRING),
          field("stderr", STRING));
  public static final VariantType LOGIN_STATE =
      WitType.variant(
          "login-state",
          unitCase("logged-in"),
          payloadCase("logged-out", STRING),
          payloadCase("unknown", STRING));

  public static final RecordType BRIDGE =
      record(
          "bridge",
          field("server-name", STRING),
          field("url", STRING),
          field("bearer-token", STRING),
          field("tool-names", STRINGS));
  public static final EnumType SESSION_MODE = WitType.enumOf("session-mode", "new", "resume");
  public static final RecordType SESSION =
      record("session", field("id", STRING), field("mode", SESSION_MODE));
  public static final RecordType LAUNCH_REQUEST =
      record(
          "launch-request",
          field("model", option(STRING)),
          field("system-prompt", STRING),
          field("config", option(STRING)),
          field("bridge", option(BRIDGE)),
          field("session", SESSION),
          field("harness-version", option(STRING)),
          field("task", STRING));

  public static final RecordType DRIVER_FILE =
      record("driver-file", field("name", STRING), field("contents", STRING));
  public static final RecordType LAUNCH_PLAN =
      record(
          "launch-plan",
          field("args", STRINGS),
          field("env-set", list(WitType.tuple(STRING, STRING))),
          field("files", list(DRIVER_FILE)),
          field("stdin", option(BYTES)),
          field("keep-stdin-open", Primitive.BOOL),
          field("interrupt-stdin", option(BYTES)));
  public static final ResultType LAUNCH_RESULT =
      new ResultType(Optional.of(LAUNCH_PLAN), Optional.of(STRING));

  public static final RecordType SESSION_INFO =
      record(
          "session-info",
          field("id", STRING),
          field("auth", STRING),
          field("model", option(STRING)));
  public static final RecordType USAGE =
      record(
          "usage",
          field("input", option(Primitive.U64)),
          field("output", option(Primitive.U64)),
          field("cache-read", option(Primitive.U64)),
          field("cache-creation", option(Primitive.U64)),
          field("thinking", option(Primitive.U64)));
  public static final RecordType TOOL_CALL_INFO =
      record("tool-call-info", field("id", STRING), field("name", STRING), field("input", STRING));
  public static final RecordType TOOL_CALL_START =
      record("tool-call-start", field("id", STRING), field("name", STRING));
  public static final RecordType TOOL_CALL_PROGRESS =
      record("tool-call-progress", field("id", STRING), field("input-bytes", Primitive.U64));
  public static final RecordType TOOL_RESULT_INFO =
      record(
          "tool-result-info",
          field("id", STRING),
          field("output", STRING),
          field("is-error", Primitive.BOOL));
  public static final RecordType RETRY_INFO =
      record("retry-info", field("attempt", Primitive.U32), field("reason", STRING));
  public static final EnumType FAILURE_KIND =
      WitType.enumOf(
          "failure-kind", "auth", "quota", "max-turns", "canceled", "harness-error", "other");
  public static final RecordType TURN_FAILURE =
      record("turn-failure", field("kind", FAILURE_KIND), field("message", STRING));
  public static final EnumType QUOTA_STATE =
      WitType.enumOf("quota-state", "ok", "warning", "exhausted");
  public static final RecordType QUOTA_WINDOW =
      record(
          "quota-window",
          field("name", STRING),
          field("used", option(Primitive.F64)),
          field("resets-at", option(Primitive.U64)),
          field("window-minutes", option(Primitive.U64)),
          field("state", option(QUOTA_STATE)));

  /** WIT {@code event}; case indexes are the {@code EVENT_*} constants of {@link ContractCodec}. */
  public static final VariantType EVENT =
      WitType.variant(
          "event",
          payloadCase("session-started", SESSION_INFO),
          payloadCase("text-delta", STRING),
          payloadCase("text", STRING),
          payloadCase("thinking-delta", STRING),
          payloadCase("thinking", STRING),
          payloadCase("tool-call", TOOL_CALL_INFO),
          payloadCase("tool-result", TOOL_RESULT_INFO),
          payloadCase("retry", RETRY_INFO),
          payloadCase("usage", USAGE),
          payloadCase("turn-end", STRING),
          payloadCase("turn-failed", TURN_FAILURE),
          payloadCase("note", STRING),
          payloadCase("tool-call-started", TOOL_CALL_START),
          payloadCase("tool-call-progress", TOOL_CALL_PROGRESS),
          payloadCase("quota", list(QUOTA_WINDOW)),
          payloadCase("suggested-prompt", STRING));

  public static final ListType EVENTS = new ListType(EVENT);

  public static final RecordType EXIT_STATUS =
      record(
          "exit-status",
          field("code", option(Primitive.S32)),
          field("signal", option(Primitive.S32)),
          field("stderr-tail", STRING),
          field("interrupted", Primitive.BOOL),
          field("saw-terminal", Primitive.BOOL));

  public static final WitFunction DESCRIBE = WitFunction.of("describe", DESCRIPTION);
  public static final WitFunction LAUNCH = WitFunction.of("launch", LAUNCH_RESULT, LAUNCH_REQUEST);
  public static final WitFunction PARSE = WitFunction.of("parse", EVENTS, STRINGS);
  public static final WitFunction CLASSIFY_EXIT =
      WitFunction.of("classify-exit", EVENT, EXIT_STATUS);
  public static final WitFunction READ_LOGIN =
      WitFunction.of("read-login", LOGIN_STATE, LOGIN_OUTPUT);

  /** The core export of a contract function: {@code murmur:driver/process@0.6.0#parse}. */
  public static String coreExport(WitFunction function) {
    return INTERFACE + "#" + function.name();
  }
}
