package io.capsule.protocol.frame;

import java.util.Map;

/**
 * hub → runner (only to a runner that declared {@code ack}): the highest runner seq the hub holds
 * per task. The runner trims its replay buffer up to it.
 */
public record Ack(Map<String, Long> acks, Extras extra) implements Frame {
  public static final String TYPE = "ack";

  public Ack {
    acks = Ordered.copy(acks);
    extra = extra == null ? Extras.NONE : extra;
  }

  public Ack(Map<String, Long> acks) {
    this(acks, Extras.NONE);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
