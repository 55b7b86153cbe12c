package io.capsule.driver.abi;

import static io.capsule.driver.abi.ContractCodec.list;
import static io.capsule.driver.abi.ContractCodec.optional;

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
import java.util.Optional;

/**
 * {@link Event} ↔ the ABI value of WIT {@code event} ({@link ContractTypes#EVENT}). The case
 * constants are the WIT declaration order, which is the discriminant on the wire.
 */
public final class EventCodec {
  private EventCodec() {}

  public static final int SESSION_STARTED = 0;
  public static final int TEXT_DELTA = 1;
  public static final int TEXT = 2;
  public static final int THINKING_DELTA = 3;
  public static final int THINKING = 4;
  public static final int TOOL_CALL = 5;
  public static final int TOOL_RESULT = 6;
  public static final int RETRY = 7;
  public static final int USAGE = 8;
  public static final int TURN_END = 9;
  public static final int TURN_FAILED = 10;
  public static final int NOTE = 11;
  public static final int TOOL_CALL_STARTED = 12;
  public static final int TOOL_CALL_PROGRESS = 13;
  public static final int QUOTA = 14;
  public static final int SUGGESTED_PROMPT = 15;

  /** Reads a lifted {@code event} value. */
  public static Event event(Object v) {
    WitVariant w = (WitVariant) v;
    Object p = w.get();
    return switch (w.caseIndex()) {
      case SESSION_STARTED -> {
        WitRecord r = (WitRecord) p;
        yield new Event.SessionStarted(
            new SessionInfo(
                (String) r.get(0), (String) r.get(1), optional(r.get(2), String.class::cast)));
      }
      case TEXT_DELTA -> new Event.TextDelta((String) p);
      case TEXT -> new Event.Text((String) p);
      case THINKING_DELTA -> new Event.ThinkingDelta((String) p);
      case THINKING -> new Event.Thinking((String) p);
      case TOOL_CALL -> {
        WitRecord r = (WitRecord) p;
        yield new Event.ToolCall(
            new ToolCallInfo((String) r.get(0), (String) r.get(1), (String) r.get(2)));
      }
      case TOOL_RESULT -> {
        WitRecord r = (WitRecord) p;
        yield new Event.ToolResult(
            new ToolResultInfo((String) r.get(0), (String) r.get(1), (Boolean) r.get(2)));
      }
      case RETRY -> {
        WitRecord r = (WitRecord) p;
        yield new Event.Retry(new RetryInfo((Long) r.get(0), (String) r.get(1)));
      }
      case USAGE -> new Event.UsageReport(usage((WitRecord) p));
      case TURN_END -> new Event.TurnEnd((String) p);
      case TURN_FAILED -> {
        WitRecord r = (WitRecord) p;
        yield new Event.TurnFailed(
            new TurnFailure(FailureKind.values()[((WitEnum) r.get(0)).index()], (String) r.get(1)));
      }
      case NOTE -> new Event.Note((String) p);
      case TOOL_CALL_STARTED -> {
        WitRecord r = (WitRecord) p;
        yield new Event.ToolCallStarted(new ToolCallStart((String) r.get(0), (String) r.get(1)));
      }
      case TOOL_CALL_PROGRESS -> {
        WitRecord r = (WitRecord) p;
        yield new Event.ToolCallProgressed(
            new ToolCallProgress((String) r.get(0), (Long) r.get(1)));
      }
      case QUOTA -> new Event.Quota(list(p, EventCodec::quotaWindow));
      case SUGGESTED_PROMPT -> new Event.SuggestedPrompt((String) p);
      default -> throw new IllegalArgumentException("no event case " + w.caseIndex());
    };
  }

  /** The ABI value of an event, to lower. */
  public static WitVariant value(Event e) {
    if (e instanceof Event.SessionStarted s) {
      SessionInfo i = s.info();
      return WitVariant.of(SESSION_STARTED, WitRecord.of(i.id(), i.auth(), i.model()));
    }
    if (e instanceof Event.TextDelta t) {
      return WitVariant.of(TEXT_DELTA, t.text());
    }
    if (e instanceof Event.Text t) {
      return WitVariant.of(TEXT, t.text());
    }
    if (e instanceof Event.ThinkingDelta t) {
      return WitVariant.of(THINKING_DELTA, t.text());
    }
    if (e instanceof Event.Thinking t) {
      return WitVariant.of(THINKING, t.text());
    }
    if (e instanceof Event.ToolCall c) {
      ToolCallInfo i = c.call();
      return WitVariant.of(TOOL_CALL, WitRecord.of(i.id(), i.name(), i.input()));
    }
    if (e instanceof Event.ToolResult r) {
      ToolResultInfo i = r.result();
      return WitVariant.of(TOOL_RESULT, WitRecord.of(i.id(), i.output(), i.isError()));
    }
    if (e instanceof Event.Retry r) {
      return WitVariant.of(RETRY, WitRecord.of(r.retry().attempt(), r.retry().reason()));
    }
    if (e instanceof Event.UsageReport u) {
      Usage x = u.usage();
      return WitVariant.of(
          USAGE,
          WitRecord.of(x.input(), x.output(), x.cacheRead(), x.cacheCreation(), x.thinking()));
    }
    if (e instanceof Event.TurnEnd t) {
      return WitVariant.of(TURN_END, t.result());
    }
    if (e instanceof Event.TurnFailed f) {
      TurnFailure x = f.failure();
      return WitVariant.of(TURN_FAILED, WitRecord.of(new WitEnum(x.kind().ordinal()), x.message()));
    }
    if (e instanceof Event.Note n) {
      return WitVariant.of(NOTE, n.text());
    }
    if (e instanceof Event.ToolCallStarted s) {
      return WitVariant.of(TOOL_CALL_STARTED, WitRecord.of(s.start().id(), s.start().name()));
    }
    if (e instanceof Event.ToolCallProgressed p) {
      ToolCallProgress x = p.progress();
      return WitVariant.of(TOOL_CALL_PROGRESS, WitRecord.of(x.id(), x.inputBytes()));
    }
    if (e instanceof Event.Quota q) {
      return WitVariant.of(QUOTA, q.windows().stream().map(EventCodec::value).toList());
    }
    return WitVariant.of(SUGGESTED_PROMPT, ((Event.SuggestedPrompt) e).prompt());
  }

  private static Usage usage(WitRecord r) {
    return new Usage(u64(r.get(0)), u64(r.get(1)), u64(r.get(2)), u64(r.get(3)), u64(r.get(4)));
  }

  private static Optional<Long> u64(Object v) {
    return optional(v, Long.class::cast);
  }

  private static QuotaWindow quotaWindow(Object v) {
    WitRecord r = (WitRecord) v;
    return new QuotaWindow(
        (String) r.get(0),
        optional(r.get(1), Double.class::cast),
        u64(r.get(2)),
        u64(r.get(3)),
        optional(r.get(4), s -> QuotaState.values()[((WitEnum) s).index()]));
  }

  private static WitRecord value(QuotaWindow w) {
    return WitRecord.of(
        w.name(),
        w.used(),
        w.resetsAt(),
        w.windowMinutes(),
        w.state().map(s -> new WitEnum(s.ordinal())));
  }
}
