package io.capsule.runtime.core;

import io.capsule.driver.api.Usage;
import java.util.Optional;
import java.util.function.Function;

/**
 * Attributes cumulative usage reports as growth (docs/run-semantics.md §7). Each member is tracked
 * on its own: a report's growth for a member is what it adds over the highest value already
 * attributed; the same total twice adds nothing, a member that shrinks adds zero, and a member
 * never reported stays <i>none</i> (empty), never {@code 0}.
 *
 * <p>Not thread-safe; owned by one {@link TurnLedger}.
 */
public final class UsageMeter {

  private Usage attributed = Usage.NONE;

  /** Everything attributed so far: per member the highest cumulative value seen, or none. */
  public Usage total() {
    return attributed;
  }

  /**
   * Takes one cumulative report and returns its growth per member: empty where the report has no
   * value for the member, else the (non-negative) growth over what was attributed before.
   */
  public Usage report(Usage cumulative) {
    Usage growth =
        new Usage(
            grow(cumulative, Usage::input),
            grow(cumulative, Usage::output),
            grow(cumulative, Usage::cacheRead),
            grow(cumulative, Usage::cacheCreation),
            grow(cumulative, Usage::thinking));
    attributed =
        new Usage(
            max(cumulative, Usage::input),
            max(cumulative, Usage::output),
            max(cumulative, Usage::cacheRead),
            max(cumulative, Usage::cacheCreation),
            max(cumulative, Usage::thinking));
    return growth;
  }

  private Optional<Long> grow(Usage cumulative, Function<Usage, Optional<Long>> member) {
    Optional<Long> now = member.apply(cumulative);
    if (now.isEmpty()) {
      return Optional.empty();
    }
    long before = member.apply(attributed).orElse(0L);
    return Optional.of(Long.compareUnsigned(now.get(), before) > 0 ? now.get() - before : 0L);
  }

  private Optional<Long> max(Usage cumulative, Function<Usage, Optional<Long>> member) {
    Optional<Long> now = member.apply(cumulative);
    Optional<Long> before = member.apply(attributed);
    if (now.isEmpty()) {
      return before;
    }
    if (before.isEmpty()) {
      return now;
    }
    return Optional.of(
        Long.compareUnsigned(now.get(), before.get()) > 0 ? now.get() : before.get());
  }

  /** Adds two growths member by member; none + none stays none, none + n is n. */
  public static Usage plus(Usage a, Usage b) {
    return new Usage(
        sum(a.input(), b.input()),
        sum(a.output(), b.output()),
        sum(a.cacheRead(), b.cacheRead()),
        sum(a.cacheCreation(), b.cacheCreation()),
        sum(a.thinking(), b.thinking()));
  }

  private static Optional<Long> sum(Optional<Long> a, Optional<Long> b) {
    if (a.isEmpty()) {
      return b;
    }
    if (b.isEmpty()) {
      return a;
    }
    return Optional.of(a.get() + b.get());
  }

  /**
   * Tokens that count against {@code inference.max_session_tokens}: input, cache-read,
   * cache-creation and output. Thinking is a subset of output, so it is not added again.
   */
  public static long spend(Usage u) {
    return u.input().orElse(0L)
        + u.output().orElse(0L)
        + u.cacheRead().orElse(0L)
        + u.cacheCreation().orElse(0L);
  }
}
