package io.capsule.protocol.frame;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * Either side, only to a peer that declared {@code error-frames}: a frame it sent was refused.
 *
 * @param code a catalog code, e.g. {@code E-PRO-004}
 * @param refSeq the seq of the refused frame, when it had one
 */
public record ErrorFrame(String code, String message, OptionalLong refSeq, Extras extra)
    implements Frame {
  public static final String TYPE = "error";

  public ErrorFrame {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(message, "message");
    refSeq = refSeq == null ? OptionalLong.empty() : refSeq;
    extra = extra == null ? Extras.NONE : extra;
  }

  public ErrorFrame(String code, String message) {
    this(code, message, OptionalLong.empty(), Extras.NONE);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
