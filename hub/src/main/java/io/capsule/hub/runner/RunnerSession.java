package io.capsule.hub.runner;

import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.seq.SeqState;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One runner as the hub remembers it across connections: its sequencing, the tasks placed on it and
 * not yet reported, held-frame bytes, what may be acked, and the connection it is on now. Confined
 * to the hub's actor.
 */
final class RunnerSession {
  final SeqState seq;
  final Set<String> openTasks = new LinkedHashSet<>();
  final HeldBytes held = new HeldBytes();
  final DurableAcks acks = new DurableAcks();

  /** Frames numbered for this runner whose write is not kept yet. */
  int sentInFlight;

  RunnerConn conn;
  Hello lastHello;

  RunnerSession(SeqState seq) {
    this.seq = seq;
  }

  /** What the hub shows of this runner now. */
  RunnerInfo info(RunnerKey key) {
    Hello h = lastHello;
    return new RunnerInfo(
        key,
        conn != null,
        h == null ? "" : h.runnerVersion(),
        h == null ? List.of() : h.capabilities(),
        openTasks);
  }
}
