package io.capsule.runtime.bridge;

import java.util.List;
import java.util.Objects;

/**
 * The embedding application's say over each tool call, asked after the bridge's own gates passed
 * (the tool exists, the input is well-formed, the run is not ending, the read-only rule can be
 * kept) and before the in-flight limit.
 *
 * <p>Threading contract: called on a Pekko HTTP stream thread, possibly for several calls at once;
 * it must be thread-safe, quick and non-blocking. An exception it throws is a denial (fail closed),
 * never a crash of the bridge.
 */
@FunctionalInterface
public interface ToolPolicy {

  /** Allows everything; the default when the embedding application supplies no policy. */
  ToolPolicy ALLOW_ALL = call -> Decision.allow();

  Decision decide(Call call);

  /**
   * What the policy sees of a call. The arguments are exactly what the tool would receive.
   *
   * @param tool the bare tool name (the binary's name)
   * @param args the arguments, in order
   * @param stdinBytes the UTF-8 length of {@code stdin}, 0 when absent
   */
  record Call(String tool, List<String> args, int stdinBytes) {
    public Call {
      Objects.requireNonNull(tool, "tool");
      args = List.copyOf(args);
    }
  }

  /** Allow, or deny with a reason the harness (and the trace) will see. */
  sealed interface Decision {
    static Decision allow() {
      return Allow.INSTANCE;
    }

    static Decision deny(String reason) {
      return new Deny(reason);
    }

    /** The call may run. */
    enum Allow implements Decision {
      INSTANCE
    }

    /** The call is refused with {@code reason}. */
    record Deny(String reason) implements Decision {
      public Deny {
        Objects.requireNonNull(reason, "reason");
      }
    }
  }
}
