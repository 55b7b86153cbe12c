package io.capsule.runtime.core;

import io.capsule.driver.api.Usage;
import io.capsule.protocol.frame.UsageSplit;
import java.util.LinkedHashSet;
import java.util.Set;

/** The wire mapping of docs/run-semantics.md §7: driver usage → the five required integers. */
public final class UsageSplits {

  private UsageSplits() {}

  /**
   * {@code fresh_input} = input, {@code cache_read} = cache-read, {@code cache_write} =
   * cache-creation, {@code output} = output − thinking (never below 0: a driver that reports more
   * thinking than output has no negative output), {@code thinking} = thinking. An unreported member
   * is 0 here; only the trace keeps it unreported.
   */
  public static UsageSplit of(Usage u) {
    long output = u64(u.output().orElse(0L));
    long thinking = u64(u.thinking().orElse(0L));
    return new UsageSplit(
        u64(u.cacheRead().orElse(0L)),
        u64(u.cacheCreation().orElse(0L)),
        u64(u.input().orElse(0L)),
        Math.max(0L, output - thinking),
        thinking);
  }

  /**
   * The wire members {@code u} leaves unreported: {@code output} follows the driver's {@code
   * output}, the others their own member.
   */
  public static Set<String> unreported(Usage u) {
    Set<String> none = new LinkedHashSet<>();
    if (u.cacheRead().isEmpty()) {
      none.add("cache_read");
    }
    if (u.cacheCreation().isEmpty()) {
      none.add("cache_write");
    }
    if (u.input().isEmpty()) {
      none.add("fresh_input");
    }
    if (u.output().isEmpty()) {
      none.add("output");
    }
    if (u.thinking().isEmpty()) {
      none.add("thinking");
    }
    return Set.copyOf(none);
  }

  /** A u64 above {@link Long#MAX_VALUE} reads negative in Java; the wire caps it instead. */
  private static long u64(long value) {
    return value < 0 ? Long.MAX_VALUE : value;
  }
}
