package io.capsule.protocol.frame;

import java.util.Objects;

/** The answer to a {@link Ping}, with its nonce. */
public record Pong(String nonce, Extras extra) implements Frame {
  public static final String TYPE = "pong";

  public Pong {
    Objects.requireNonNull(nonce, "nonce");
    extra = extra == null ? Extras.NONE : extra;
  }

  public Pong(String nonce) {
    this(nonce, Extras.NONE);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
