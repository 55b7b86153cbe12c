package io.capsule.runtime.core;

/**
 * The message in progress of one stream (text or thinking), docs/run-semantics.md §6: deltas
 * append; the complete form replaces what was streamed and ends the message, so the next delta
 * starts a new one. Not thread-safe.
 */
public final class MessageBuffer {

  private final StringBuilder streamed = new StringBuilder();

  /** Appends a delta; returns what the message holds now. */
  public String append(String delta) {
    streamed.append(delta);
    return streamed.toString();
  }

  /** Ends the message with its complete text (which wins over the streamed deltas). */
  public String complete(String text) {
    streamed.setLength(0);
    return text;
  }

  /** What has been streamed for the message in progress. */
  public String inProgress() {
    return streamed.toString();
  }
}
