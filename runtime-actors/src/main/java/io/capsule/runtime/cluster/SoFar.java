package io.capsule.runtime.cluster;

import io.capsule.runtime.javadsl.RunEvent;

/**
 * Text and thinking deltas between nodes without the text so far they repeat. Each {@link
 * RunEvent.TextDelta} carries the whole message until now ({@code soFar}), so the deltas of an
 * answer of n characters carried O(n²) characters from the entity to its caller: a 100 KB answer
 * streamed in 50-character deltas, about 100 MB. The entity's side ({@link #shrink}) sends a delta
 * whose {@code soFar} is the previous one's plus its own text with {@code soFar} null, and the
 * caller's side ({@link #restore}) puts it back from the previous one; a delta that does not follow
 * on (a new message, or the first one a caller gets) crosses whole.
 *
 * <p>Both sides see the same deltas in the same order: messages are numbered per caller and
 * attempt, and a gap ends the attempt for the caller ({@code E-CLU-004}), so a restored text can
 * never silently miss a piece. A {@code null} {@code soFar} exists only between these two methods;
 * {@code downstream} never sees one.
 *
 * <p>One per caller and attempt on each side; not thread-safe (the actors' own state).
 */
final class SoFar {
  private String text = "";
  private String thinking = "";

  /** The event as it crosses to a caller that got every earlier one from this instance. */
  RunEvent shrink(RunEvent e) {
    if (e instanceof RunEvent.TextDelta d) {
      boolean follows = follows(text, d.delta(), d.soFar());
      text = d.soFar();
      return follows ? new RunEvent.TextDelta(d.taskId(), d.delta(), null) : e;
    }
    if (e instanceof RunEvent.ThinkingDelta d) {
      boolean follows = follows(thinking, d.delta(), d.soFar());
      thinking = d.soFar();
      return follows ? new RunEvent.ThinkingDelta(d.taskId(), d.delta(), null) : e;
    }
    return e;
  }

  /** The event as it was before {@link #shrink} on the other side. */
  RunEvent restore(RunEvent e) {
    if (e instanceof RunEvent.TextDelta d) {
      if (d.soFar() != null) {
        text = d.soFar();
        return e;
      }
      text = text + d.delta();
      return new RunEvent.TextDelta(d.taskId(), d.delta(), text);
    }
    if (e instanceof RunEvent.ThinkingDelta d) {
      if (d.soFar() != null) {
        thinking = d.soFar();
        return e;
      }
      thinking = thinking + d.delta();
      return new RunEvent.ThinkingDelta(d.taskId(), d.delta(), thinking);
    }
    return e;
  }

  /** Whether {@code soFar} is {@code before} and then {@code delta}. */
  private static boolean follows(String before, String delta, String soFar) {
    return soFar.length() == before.length() + delta.length()
        && soFar.startsWith(before)
        && soFar.endsWith(delta);
  }
}
