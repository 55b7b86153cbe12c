package io.capsule.runtime.core;

import io.capsule.config.manifest.Conversation;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Which harness session a task runs in (docs/run-semantics.md §8). {@code stateless}: every task
 * starts {@code new} with a fresh id. {@code threaded}: the first task of a conversation starts
 * {@code new} with a fresh id and remembers it; later tasks {@code resume} it. The runtime owns the
 * id (it pre-assigns it for {@code new}); the id the harness reports wins over the one asked for. A
 * task with no conversation key is its own conversation.
 *
 * <p>Not thread-safe: one planner per capsule, used by the runtime guardian only.
 */
public final class SessionPlanner {

  private final Conversation mode;
  private final Supplier<String> freshIds;
  private final Map<String, String> byConversation = new HashMap<>();

  /**
   * @param freshIds makes a new session id (a random UUID in production; a counter in tests)
   */
  public SessionPlanner(Conversation mode, Supplier<String> freshIds) {
    this.mode = Objects.requireNonNull(mode, "mode");
    this.freshIds = Objects.requireNonNull(freshIds, "freshIds");
  }

  /** The session for a task of {@code conversation} (the invocation's session key, if any). */
  public Session plan(Optional<String> conversation) {
    if (mode == Conversation.THREADED && conversation.isPresent()) {
      String known = byConversation.get(conversation.get());
      if (known != null) {
        return new Session(known, SessionMode.RESUME);
      }
      String fresh = freshIds.get();
      byConversation.put(conversation.get(), fresh);
      return new Session(fresh, SessionMode.NEW);
    }
    return new Session(freshIds.get(), SessionMode.NEW);
  }

  /**
   * After a run: the id the harness reported (it wins), or {@code forget} when the session is gone
   * (E-RUN-036) so the conversation's next task starts anew.
   */
  public void settle(Optional<String> conversation, Optional<String> reportedId, boolean forget) {
    if (mode != Conversation.THREADED || conversation.isEmpty()) {
      return;
    }
    if (forget) {
      byConversation.remove(conversation.get());
    } else {
      reportedId.ifPresent(id -> byConversation.put(conversation.get(), id));
    }
  }

  /** The session id remembered for a conversation, if any. */
  public Optional<String> remembered(String conversation) {
    return Optional.ofNullable(byConversation.get(conversation));
  }
}
