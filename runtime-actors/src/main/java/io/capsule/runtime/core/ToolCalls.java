package io.capsule.runtime.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Tool calls tracked by id (docs/run-semantics.md §6): started, progress (cumulative bytes; a
 * smaller report is ignored), called, result. A result with no call, or a call with no result when
 * the run ends, is a trace note. Not thread-safe; owned by one {@link TurnLedger}.
 */
public final class ToolCalls {

  /** What the trace needs about one finished call; never the input or output text itself. */
  public record Finished(
      String id,
      String name,
      int turn,
      long inputBytes,
      long outputBytes,
      Duration duration,
      boolean isError) {}

  private static final class Open {
    final String name;
    final Instant started;
    long inputBytes;
    int turn;
    boolean called;

    Open(String name, Instant started) {
      this.name = name;
      this.started = started;
    }
  }

  private final Map<String, Open> open = new LinkedHashMap<>();

  /** {@code tool-call-started}: a call begins; a repeated start of a known id changes nothing. */
  public void started(String id, String name, Instant now) {
    open.putIfAbsent(id, new Open(name, now));
  }

  /**
   * {@code tool-call-progress}: returns true when the report is news (larger than the last one);
   * false for a smaller or equal report, or an id never started, which the caller ignores.
   */
  public boolean progress(String id, long inputBytes) {
    Open call = open.get(id);
    if (call == null || Long.compareUnsigned(inputBytes, call.inputBytes) <= 0) {
      return false;
    }
    call.inputBytes = inputBytes;
    return true;
  }

  /** {@code tool-call}: the complete call; its input's UTF-8 size replaces streamed progress. */
  public void called(String id, String name, String input, int turn, Instant now) {
    Open call = open.computeIfAbsent(id, k -> new Open(name, now));
    call.inputBytes = input.getBytes(StandardCharsets.UTF_8).length;
    call.turn = turn;
    call.called = true;
  }

  /** {@code tool-result}: the finished call, or empty when no call had that id (a trace note). */
  public Optional<Finished> result(String id, String output, boolean isError, Instant now) {
    Open call = open.remove(id);
    if (call == null) {
      return Optional.empty();
    }
    return Optional.of(
        new Finished(
            id,
            call.name,
            call.turn,
            call.inputBytes,
            output.getBytes(StandardCharsets.UTF_8).length,
            Duration.between(call.started, now),
            isError));
  }

  /** Ids of calls that never got a result, in the order they started. */
  public List<String> unanswered() {
    return new ArrayList<>(open.keySet());
  }
}
