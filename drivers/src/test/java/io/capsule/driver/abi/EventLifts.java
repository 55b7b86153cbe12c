package io.capsule.driver.abi;

import io.capsule.driver.api.Event;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.GuestMemory;
import java.util.List;
import java.util.Map;

/**
 * For tests outside this package: {@code parse}'s result lifted by the specialised {@link
 * EventLifter} and by the generic lifter, from the same memory, as comparable outcomes.
 */
public final class EventLifts {
  private EventLifts() {}

  /** Events, or the refusal's message and details; exactly one of the two is non-null. */
  public record Outcome(List<Event> events, String refusal, Map<String, String> details) {
    static Outcome refused(AbiViolation e) {
      return new Outcome(null, e.diagnostic().message(), e.diagnostic().details());
    }
  }

  /** The generic path: {@link CanonicalAbi#liftResults}, then {@link ContractCodec#events}. */
  public static Outcome generic(GuestMemory memory, int retArea) {
    try {
      Object list =
          new CanonicalAbi(memory)
              .liftResults(ContractTypes.PARSE.results(), new long[] {retArea & 0xffffffffL})
              .get(0);
      return new Outcome(ContractCodec.events(list), null, null);
    } catch (AbiViolation e) {
      return Outcome.refused(e);
    }
  }

  /** The specialised lifter alone: its events, or {@code null} where it gives up. */
  public static List<Event> specialisedAlone(GuestMemory memory, int retArea) {
    return new EventLifter().events(memory, retArea);
  }

  /** What {@link ParseCall} lifts: the specialised lifter, the generic one when it gives up. */
  public static Outcome asParseCallLifts(GuestMemory memory, int retArea) {
    List<Event> fast = specialisedAlone(memory, retArea);
    return fast != null ? new Outcome(fast, null, null) : generic(memory, retArea);
  }
}
