package io.capsule.protocol.frame;

import java.util.Objects;

/** Either side: are you there? The receiver answers {@link Pong} with the same nonce. */
public record Ping(String nonce, Extras extra) implements Frame {
  public static final String TYPE = "ping";

  public Ping {
    Objects.requireNonNull(nonce, "nonce");
    extra = extra == null ? Extras.NONE : extra;
  }

  public Ping(String nonce) {
    this(nonce, Extras.NONE);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
