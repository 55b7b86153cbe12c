package io.capsule.hub.runner;

import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The brain's ({@link HubCore}'s) memory of one runner: its sequencing, which outlives connections;
 * its open tasks; the bytes of frames held above a gap; and its current connection, a {@link
 * RunnerGateway} on whichever node accepted the socket. Mutable, touched by the brain's actor only.
 */
final class BrainSession {
  private static final FrameCodec CODEC = FrameCodec.shared();

  /** One connection as the brain sees it: everything goes to its gateway as a message. */
  static final class Conn {
    final RunnerOpened opened;
    Hello hello;
    int appliedSinceAck;

    Conn(RunnerOpened opened) {
      this.opened = opened;
    }

    RunnerKey key() {
      return opened.key();
    }

    boolean has(String capability) {
      return hello != null && hello.hasCapability(capability);
    }

    void send(Frame f) {
      sendText(CODEC.encodeToString(f));
    }

    void sendText(String encoded) {
      opened.gateway().tell(new RunnerGateway.ToRunner(encoded));
    }

    /** Ends the socket: {@code code} > 0 with a close frame, else drop or abort. */
    void end(int code, String reason) {
      opened.gateway().tell(new RunnerGateway.EndSocket(code, reason));
    }
  }

  final SeqState seq;
  final Set<String> openTasks = new LinkedHashSet<>();

  /** Encoded size of each frame the SeqState holds above a gap, per task and seq. */
  private final Map<String, Map<Long, Integer>> heldSizes = new HashMap<>();

  private long heldBytes;
  Conn conn;
  Hello lastHello;

  BrainSession(SeqState seq) {
    this.seq = seq;
  }

  /**
   * Accounts one received frame: a held frame adds its encoded size, an applied one that was held
   * gives it back, a finished task gives back whatever it still held. Returns the bytes now held.
   */
  long account(SequencedFrame f, Receipt r) {
    if (r.status() == Receipt.Status.HELD) {
      int size = CODEC.encode(f).length; // only out-of-order frames pay for this
      heldSizes.computeIfAbsent(f.taskId(), k -> new HashMap<>()).put(f.seq(), size);
      heldBytes += size;
    }
    Map<Long, Integer> held = heldSizes.get(f.taskId());
    if (held != null) {
      for (SequencedFrame applied : r.applied()) {
        Integer size = held.remove(applied.seq());
        heldBytes -= size == null ? 0 : size;
      }
      if (held.isEmpty() || seq.isFinished(f.taskId())) {
        held.values().forEach(size -> heldBytes -= size);
        heldSizes.remove(f.taskId());
      }
    }
    return heldBytes;
  }

  /** Forgets every held frame (the runner replays them in order after it reconnects). */
  void dropHeld() {
    seq.dropHeld();
    heldSizes.clear();
    heldBytes = 0;
  }
}
