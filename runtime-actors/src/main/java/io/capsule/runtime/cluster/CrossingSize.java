package io.capsule.runtime.cluster;

import io.capsule.runtime.javadsl.RunEvent;
import java.util.Optional;

/**
 * How many characters an event puts into a message between nodes, roughly (its strings; a fixed
 * allowance for the rest), so that a message is cut before Artery refuses it: a message over {@code
 * pekko.remote.artery.advanced.maximum-frame-size} (256 KiB by default) is dropped. The counts that
 * matter are the large ones: a text delta carries the whole text so far (unless it crosses without
 * it, {@link SoFar}), so 64 deltas of a 20 KB answer were already over a frame.
 */
final class CrossingSize {

  /** What every event costs beyond its strings: field names, numbers, the variant's name. */
  private static final int FIXED = 128;

  /**
   * Characters one message carries at most (unless one event alone is larger: then it crosses in
   * {@link RunCaller.Part}s). CBOR writes a string as its UTF-8, at most 3 bytes a character:
   * 40,000 characters stay under 120 KiB, half a default frame.
   */
  static final int MESSAGE_CHARS = 40_000;

  /** The bytes of one {@link RunCaller.Part}: half a default frame. */
  static final int PART_BYTES = 128 * 1024;

  private CrossingSize() {}

  static long chars(RunEvent e) {
    return FIXED + e.taskId().length() + strings(e);
  }

  private static long strings(RunEvent e) {
    if (e instanceof RunEvent.TextDelta d) {
      return (long) d.delta().length() + lengthOrZero(d.soFar());
    } else if (e instanceof RunEvent.TextCompleted t) {
      return t.text().length();
    } else if (e instanceof RunEvent.ThinkingDelta d) {
      return (long) d.delta().length() + lengthOrZero(d.soFar());
    } else if (e instanceof RunEvent.ThinkingCompleted t) {
      return t.text().length();
    } else if (e instanceof RunEvent.ToolStarted t) {
      return (long) t.callId().length() + t.name().length();
    } else if (e instanceof RunEvent.ToolCalled t) {
      return (long) t.callId().length() + t.name().length() + t.input().length();
    } else if (e instanceof RunEvent.ToolResulted t) {
      return (long) t.callId().length() + t.output().length();
    } else if (e instanceof RunEvent.SessionStarted s) {
      return (long) s.sessionId().length() + s.auth().length() + length(s.model());
    } else if (e instanceof RunEvent.SuggestedPrompt p) {
      return p.prompt().length();
    } else if (e instanceof RunEvent.Note n) {
      return n.text().length();
    } else if (e instanceof RunEvent.Retry r) {
      return r.reason().length();
    } else if (e instanceof RunEvent.Warning w) {
      return (long) w.code().length() + w.message().length();
    } else if (e instanceof RunEvent.AttemptLost l) {
      return (long) l.node().length() + l.message().length();
    } else if (e instanceof RunEvent.QuotaUpdated q) {
      return 64L * q.windows().size();
    } else if (e instanceof RunEvent.Finished f) {
      return (long) f.outcome().message().length() + length(f.outcome().result());
    }
    return 0; // the rest: numbers, ids and short names, within FIXED
  }

  private static long length(Optional<String> s) {
    return s.map(String::length).orElse(0);
  }

  /** A delta's text so far is null when it crosses without it ({@link SoFar}). */
  private static int lengthOrZero(String soFar) {
    return soFar == null ? 0 : soFar.length();
  }
}
