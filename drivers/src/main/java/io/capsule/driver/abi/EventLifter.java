package io.capsule.driver.abi;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.QuotaState;
import io.capsule.driver.api.QuotaWindow;
import io.capsule.driver.api.RetryInfo;
import io.capsule.driver.api.SessionInfo;
import io.capsule.driver.api.ToolCallInfo;
import io.capsule.driver.api.ToolCallProgress;
import io.capsule.driver.api.ToolCallStart;
import io.capsule.driver.api.ToolResultInfo;
import io.capsule.driver.api.TurnFailure;
import io.capsule.driver.api.Usage;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.GuestMemory;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * {@code parse}'s result, a {@code list<event>}, lifted from guest memory straight into {@link
 * Event} records: what {@link Lifter} then {@link EventCodec#event} give, without the generic
 * values in between ({@link WitVariant}, {@link WitRecord}, one {@link Optional} per option, a
 * supplier per payload) and without an intermediate {@code byte[]} per string. Why: the lines of
 * the short-line drivers (jsonl, codex, gemini) are 68–180 bytes, so the host's fixed cost per
 * event weighs against what the guest does per line (issue #15).
 *
 * <p>It validates what the generic lifter validates — the return area's and the list's alignment
 * and bounds, the list's byte length, every discriminant (event, option, enum), every bool, every
 * string's bounds and strict UTF-8, and the budget that refuses overlapping strings and lists — but
 * it does not word a refusal: at the first thing it would refuse it gives up, and the caller lifts
 * the same result again with the generic {@link Lifter} ({@link CanonicalAbi#liftResults}), which
 * throws the one {@link AbiViolation}, with the same code, message and path, as it always has.
 * Lifting reads memory only (no guest code runs in between), so the second lift sees the same
 * bytes. The generic lifter therefore stays the definition of what lifts and what does not; this
 * class must only never accept what it refuses, and build the same events when both accept (the
 * differential test checks both on every golden transcript and on malformed results).
 *
 * <p>One lifter per instance, reused across calls (it keeps a scratch array for string bytes). Not
 * thread-safe: confined with its instance.
 */
final class EventLifter {

  /**
   * Gives up on this result: the generic lifter words the refusal. No stack, thrown often only by
   * hostile drivers.
   */
  private static final class GiveUp extends RuntimeException {
    private static final long serialVersionUID = 1L;

    GiveUp() {
      super("the specialised event lifter gives up", null, false, false);
    }
  }

  private static final GiveUp GIVE_UP = new GiveUp();

  private static final VariantType EVENT = ContractTypes.EVENT;
  private static final int EVENT_SIZE = EVENT.size();
  private static final int EVENT_ALIGN = EVENT.alignment();
  private static final int PAYLOAD = EVENT.cases().payloadOffset();
  private static final int CASES = EVENT.cases().caseCount();

  // record field offsets, from the same type model the generic lifter walks
  private static final RecordType SESSION_INFO = ContractTypes.SESSION_INFO;
  private static final RecordType TOOL_CALL_INFO = ContractTypes.TOOL_CALL_INFO;
  private static final RecordType TOOL_RESULT_INFO = ContractTypes.TOOL_RESULT_INFO;
  private static final RecordType RETRY_INFO = ContractTypes.RETRY_INFO;
  private static final RecordType USAGE = ContractTypes.USAGE;
  private static final RecordType TURN_FAILURE = ContractTypes.TURN_FAILURE;
  private static final RecordType TOOL_CALL_START = ContractTypes.TOOL_CALL_START;
  private static final RecordType TOOL_CALL_PROGRESS = ContractTypes.TOOL_CALL_PROGRESS;
  private static final RecordType QUOTA_WINDOW = ContractTypes.QUOTA_WINDOW;
  private static final int WINDOW_SIZE = QUOTA_WINDOW.size();
  private static final int WINDOW_ALIGN = QUOTA_WINDOW.alignment();
  private static final int FAILURE_KINDS = ContractTypes.FAILURE_KIND.names().size();
  private static final int QUOTA_STATES = ContractTypes.QUOTA_STATE.names().size();
  private static final FailureKind[] FAILURE_KIND = FailureKind.values();
  private static final QuotaState[] QUOTA_STATE = QuotaState.values();

  /**
   * A {@code byte[]} read eight bytes at a time ({@link #ascii}); the byte order does not matter.
   */
  private static final VarHandle WORDS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

  private static final long HIGH_BITS = 0x8080_8080_8080_8080L;

  private final CharsetDecoder utf8 = Lifter.strictUtf8();
  private byte[] scratch = new byte[256];
  private GuestMemory memory;
  private long memorySize;
  private long budget;

  static {
    // The layout this class reads is the one the type model computes; if the WIT ever changes
    // these, the class must change with it (and the differential test fails first).
    check(FAILURE_KIND.length == FAILURE_KINDS, "failure-kind cases");
    check(QUOTA_STATE.length == QUOTA_STATES, "quota-state cases");
    check(CASES == 16 && EVENT.cases().discriminantSize() == 1, "event discriminant");
    check(QUOTA_WINDOW.fields().get(1).type().alignment() == 8, "quota-window.used");
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError("the contract's layout changed: " + what);
    }
  }

  /**
   * The events of the {@code list<event>} whose pointer and length are stored at {@code retArea}
   * (the pointer {@code parse} returned); {@code null} when the generic lifter must decide (it then
   * refuses, or in a case this class does not know, accepts).
   */
  List<Event> events(GuestMemory memory, int retArea) {
    this.memory = memory;
    this.memorySize = memory.size();
    this.budget = memorySize;
    try {
      long start = Integer.toUnsignedLong(retArea);
      if (start % 4 != 0 || start + 8 > memorySize) {
        return null;
      }
      int ptr = memory.loadI32(retArea);
      int length = memory.loadI32(retArea + 4);
      int first = listStart(ptr, length, EVENT_SIZE, EVENT_ALIGN);
      int count = length;
      Event[] events = new Event[count];
      for (int i = 0; i < count; i++) {
        events[i] = event(first + i * EVENT_SIZE);
      }
      return Collections.unmodifiableList(java.util.Arrays.asList(events));
    } catch (GiveUp | AbiViolation e) {
      return null;
    } finally {
      this.memory = null;
    }
  }

  /** The checks of {@link Lifter#list} for a list of {@code size}-byte elements; its start. */
  private int listStart(int ptr, int length, int size, int alignment) {
    long start = Integer.toUnsignedLong(ptr);
    long count = Integer.toUnsignedLong(length);
    if (start % alignment != 0) {
      throw GIVE_UP;
    }
    long bytes = count * size;
    if (bytes >= 1L << 32 || start + bytes > memorySize || count > Integer.MAX_VALUE) {
      throw GIVE_UP;
    }
    spend(bytes);
    return ptr;
  }

  private void spend(long bytes) {
    budget -= bytes;
    if (budget < 0) {
      throw GIVE_UP;
    }
  }

  private Event event(int at) {
    int discriminant = memory.loadU8(at) & 0xff;
    int p = at + PAYLOAD;
    return switch (discriminant) {
      case EventCodec.SESSION_STARTED ->
          new Event.SessionStarted(
              new SessionInfo(
                  string(p + SESSION_INFO.offset(0)),
                  string(p + SESSION_INFO.offset(1)),
                  optionalString(p + SESSION_INFO.offset(2))));
      case EventCodec.TEXT_DELTA -> new Event.TextDelta(string(p));
      case EventCodec.TEXT -> new Event.Text(string(p));
      case EventCodec.THINKING_DELTA -> new Event.ThinkingDelta(string(p));
      case EventCodec.THINKING -> new Event.Thinking(string(p));
      case EventCodec.TOOL_CALL ->
          new Event.ToolCall(
              new ToolCallInfo(
                  string(p + TOOL_CALL_INFO.offset(0)),
                  string(p + TOOL_CALL_INFO.offset(1)),
                  string(p + TOOL_CALL_INFO.offset(2))));
      case EventCodec.TOOL_RESULT ->
          new Event.ToolResult(
              new ToolResultInfo(
                  string(p + TOOL_RESULT_INFO.offset(0)),
                  string(p + TOOL_RESULT_INFO.offset(1)),
                  bool(p + TOOL_RESULT_INFO.offset(2))));
      case EventCodec.RETRY ->
          new Event.Retry(
              new RetryInfo(
                  Integer.toUnsignedLong(memory.loadI32(p + RETRY_INFO.offset(0))),
                  string(p + RETRY_INFO.offset(1))));
      case EventCodec.USAGE ->
          new Event.UsageReport(
              new Usage(
                  optionalU64(p + USAGE.offset(0)),
                  optionalU64(p + USAGE.offset(1)),
                  optionalU64(p + USAGE.offset(2)),
                  optionalU64(p + USAGE.offset(3)),
                  optionalU64(p + USAGE.offset(4))));
      case EventCodec.TURN_END -> new Event.TurnEnd(string(p));
      case EventCodec.TURN_FAILED ->
          new Event.TurnFailed(
              new TurnFailure(
                  FAILURE_KIND[enumIndex(p + TURN_FAILURE.offset(0), FAILURE_KINDS)],
                  string(p + TURN_FAILURE.offset(1))));
      case EventCodec.NOTE -> new Event.Note(string(p));
      case EventCodec.TOOL_CALL_STARTED ->
          new Event.ToolCallStarted(
              new ToolCallStart(
                  string(p + TOOL_CALL_START.offset(0)), string(p + TOOL_CALL_START.offset(1))));
      case EventCodec.TOOL_CALL_PROGRESS ->
          new Event.ToolCallProgressed(
              new ToolCallProgress(
                  string(p + TOOL_CALL_PROGRESS.offset(0)),
                  memory.loadI64(p + TOOL_CALL_PROGRESS.offset(1))));
      case EventCodec.QUOTA -> new Event.Quota(quotaWindows(p));
      case EventCodec.SUGGESTED_PROMPT -> new Event.SuggestedPrompt(string(p));
      default -> throw GIVE_UP;
    };
  }

  private List<QuotaWindow> quotaWindows(int at) {
    int ptr = memory.loadI32(at);
    int length = memory.loadI32(at + 4);
    int first = listStart(ptr, length, WINDOW_SIZE, WINDOW_ALIGN);
    List<QuotaWindow> windows = new ArrayList<>(length);
    for (int i = 0; i < length; i++) {
      int w = first + i * WINDOW_SIZE;
      Optional<QuotaState> state;
      int stateAt = w + QUOTA_WINDOW.offset(4);
      if (someOf(stateAt)) {
        state = Optional.of(QUOTA_STATE[enumIndex(stateAt + 1, QUOTA_STATES)]);
      } else {
        state = Optional.empty();
      }
      windows.add(
          new QuotaWindow(
              string(w + QUOTA_WINDOW.offset(0)),
              optionalF64(w + QUOTA_WINDOW.offset(1)),
              optionalU64(w + QUOTA_WINDOW.offset(2)),
              optionalU64(w + QUOTA_WINDOW.offset(3)),
              state));
    }
    // what ContractCodec.list gives (Stream.toList): unmodifiable
    return Collections.unmodifiableList(windows);
  }

  /** An option's discriminant: 0 none, 1 some, else the generic lifter refuses. */
  private boolean someOf(int at) {
    int d = memory.loadU8(at) & 0xff;
    if (d > 1) {
      throw GIVE_UP;
    }
    return d == 1;
  }

  private int enumIndex(int at, int cases) {
    int d = memory.loadU8(at) & 0xff;
    if (d >= cases) {
      throw GIVE_UP;
    }
    return d;
  }

  private boolean bool(int at) {
    int b = memory.loadU8(at) & 0xff;
    if (b > 1) {
      throw GIVE_UP;
    }
    return b == 1;
  }

  /** {@code option<u64>}: the payload at 8 (a u64's alignment). */
  private Optional<Long> optionalU64(int at) {
    return someOf(at) ? Optional.of(memory.loadI64(at + 8)) : Optional.empty();
  }

  /** {@code option<f64>}: the payload at 8; every NaN becomes the canonical one. */
  private Optional<Double> optionalF64(int at) {
    if (!someOf(at)) {
      return Optional.empty();
    }
    double d = Double.longBitsToDouble(memory.loadI64(at + 8));
    return Optional.of(Double.isNaN(d) ? Double.NaN : d);
  }

  /** {@code option<string>}: the payload at 4 (a string's alignment). */
  private Optional<String> optionalString(int at) {
    return someOf(at) ? Optional.of(string(at + 4)) : Optional.empty();
  }

  /** The string whose pointer and byte length are stored at {@code at}. */
  private String string(int at) {
    int ptr = memory.loadI32(at);
    int byteLength = memory.loadI32(at + 4);
    long start = Integer.toUnsignedLong(ptr);
    long length = Integer.toUnsignedLong(byteLength);
    if (start + length > memorySize || length > Integer.MAX_VALUE) {
      throw GIVE_UP;
    }
    if (length == 0) {
      return "";
    }
    spend(length);
    int n = byteLength;
    if (scratch.length < n) {
      scratch = new byte[Math.max(n, scratch.length * 2)];
    }
    byte[] bytes = scratch;
    memory.loadBytes(ptr, bytes, 0, n);
    if (!ascii(bytes, n)) {
      return decode(bytes, n);
    }
    // all ASCII: Latin-1 is the same bytes, and its constructor copies without re-checking
    return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
  }

  /** Whether the first {@code n} bytes are all ASCII: eight at a time, then one at a time. */
  static boolean ascii(byte[] bytes, int n) {
    int i = 0;
    for (; i + Long.BYTES <= n; i += Long.BYTES) {
      if (((long) WORDS.get(bytes, i) & HIGH_BITS) != 0) {
        return false;
      }
    }
    for (; i < n; i++) {
      if (bytes[i] < 0) {
        return false;
      }
    }
    return true;
  }

  /** The generic lifter's strict decoding of a string that is not all ASCII. */
  private String decode(byte[] bytes, int n) {
    ByteBuffer in = ByteBuffer.wrap(bytes, 0, n);
    CharBuffer out = CharBuffer.allocate(n);
    utf8.reset();
    CoderResult result = utf8.decode(in, out, true);
    if (!result.isError()) {
      result = utf8.flush(out);
    }
    if (result.isError()) {
      throw GIVE_UP;
    }
    return out.flip().toString();
  }
}
