package io.capsule.config.manifest;

import java.util.Objects;

/** {@code lifecycle}: how tasks relate to harness sessions. */
public record Lifecycle(Conversation conversation) {

  public static final Lifecycle DEFAULT = new Lifecycle(Conversation.STATELESS);

  public Lifecycle {
    Objects.requireNonNull(conversation, "conversation");
  }
}
