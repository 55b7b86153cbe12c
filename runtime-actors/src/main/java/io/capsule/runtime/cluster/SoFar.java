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
  private final Message text = new Message();
  private final Message thinking = new Message();

  /** The event as it crosses to a caller that got every earlier one from this instance. */
  RunEvent shrink(RunEvent e) {
    if (e instanceof RunEvent.TextDelta d) {
      return text.follows(d.delta(), d.soFar())
          ? new RunEvent.TextDelta(d.taskId(), d.delta(), null)
          : e;
    }
    if (e instanceof RunEvent.ThinkingDelta d) {
      return thinking.follows(d.delta(), d.soFar())
          ? new RunEvent.ThinkingDelta(d.taskId(), d.delta(), null)
          : e;
    }
    return e;
  }

  /** The event as it was before {@link #shrink} on the other side. */
  RunEvent restore(RunEvent e) {
    if (e instanceof RunEvent.TextDelta d && d.soFar() == null) {
      return new RunEvent.TextDelta(d.taskId(), d.delta(), text.append(d.delta()));
    }
    if (e instanceof RunEvent.ThinkingDelta d && d.soFar() == null) {
      return new RunEvent.ThinkingDelta(d.taskId(), d.delta(), thinking.append(d.delta()));
    }
    if (e instanceof RunEvent.TextDelta d) {
      text.is(d.soFar());
    } else if (e instanceof RunEvent.ThinkingDelta d) {
      thinking.is(d.soFar());
    }
    return e;
  }

  /** One kind of message's text so far, as the last delta of that kind left it. */
  private static final class Message {
    private String soFar = "";

    /** Whether {@code now} is the text so far and then {@code delta}; {@code now} is it next. */
    boolean follows(String delta, String now) {
      boolean follows =
          now.length() == soFar.length() + delta.length()
              && now.startsWith(soFar)
              && now.endsWith(delta);
      soFar = now;
      return follows;
    }

    String append(String delta) {
      soFar = soFar + delta;
      return soFar;
    }

    void is(String now) {
      soFar = now;
    }
  }
}
