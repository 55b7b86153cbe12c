package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.Wire;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pekko.http.javadsl.model.ws.Message;

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
  private long account(SequencedFrame f, Receipt r) {
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

  /**
   * Makes {@code c} (which said {@code h}) the runner's connection; returns the one it replaces,
   * closed with 4000, or null.
   */
  Conn attach(Conn c, Hello h) {
    c.hello = h;
    Conn old = conn != null && conn != c ? conn : null;
    if (old != null) {
      old.end(CloseCodes.REPLACED, "replaced");
    }
    conn = c;
    lastHello = h;
    return old;
  }

  /**
   * What answers a hello, decided now and sent later (once everything queued before it is stored):
   * the ack map (null when the runner does not take acks) and, as the resume map proves what the
   * runner holds, the rest to replay in order (and everything of an open task it does not list).
   */
  record Resume(Ack ack, List<SequencedFrame> replay) {
    void sendTo(Conn c) {
      if (ack != null) {
        c.send(ack);
      }
      replay.forEach(c::send);
    }
  }

  /** Trims what the runner's hello says it holds and decides the {@link Resume}. */
  Resume resume(Conn c, Hello h) {
    Ack ack = c.has(Capabilities.ACK) ? new Ack(seq.takeAckMap()) : null;
    seq.ack(h.resume());
    return new Resume(ack, seq.replayListFor(h.resume()));
  }

  /** The connection frames go to now: attached and past its hello, or null. */
  Conn live() {
    return conn != null && conn.hello != null ? conn : null;
  }

  /** Bytes of out-of-order frames held for this runner now: a gauge. */
  long heldBytes() {
    return heldBytes;
  }

  /** A hub frame numbered for this runner, its journal entry, and its text as it goes out. */
  record Numbered<F extends SequencedFrame>(F frame, HubJournal.Entry entry, String text) {}

  /**
   * Numbers a hub frame for this runner (it enters the replay buffer, so a resume brings it if it
   * is not sent). The caller journals the entry and sends the text once the entry is stored.
   *
   * @throws ProtocolException {@code E-PRO-005} above the runner's frame cap (refused before it
   *     takes a seq: the runner could never accept it), or a full replay buffer
   */
  <F extends SequencedFrame> Numbered<F> number(RunnerKey key, F frame, int cap) {
    Message message = Wire.cappedNext(seq, frame, cap);
    F numbered = seq.emit(frame);
    return new Numbered<>(
        numbered,
        new HubJournal.Entry(key, Direction.SENT, numbered),
        message.asTextMessage().getStrictText());
  }

  /**
   * What {@code GET /v1/runners} and placement see of this runner now: its open tasks by their own
   * ids, not the wire ids of their attempts ({@link io.capsule.hub.placement.Attempt}).
   */
  RunnerInfo info(RunnerKey key) {
    Hello h = lastHello;
    return new RunnerInfo(
        key,
        conn != null,
        h == null ? "" : h.runnerVersion(),
        h == null ? List.of() : h.capabilities(),
        openTasks.stream()
            .map(io.capsule.hub.placement.Attempt::taskOf)
            .collect(java.util.stream.Collectors.toSet()));
  }

  /**
   * The refusal of progress or a report for a task not placed on {@code key}: {@code owner} is the
   * runner it is placed on, if any.
   */
  static FrameRejected notPlaced(RunnerKey key, SequencedFrame f, RunnerKey owner) {
    return new FrameRejected(
        Code.E_PRO_011,
        "runner '"
            + key.runnerId()
            + "' sent "
            + f.type()
            + " seq "
            + f.seq()
            + " for task '"
            + f.taskId()
            + "', which "
            + (owner == null
                ? "is not an open task of this project"
                : "is placed on runner '" + owner.runnerId() + "'")
            + "; nothing of it was applied");
  }

  /**
   * Accounts one received frame and keeps the bytes of held frames under {@code budget}: past it
   * every held frame is dropped and the refusal's message returned (the caller closes the
   * connection, 1008 E-PRO-013). Nothing applied is lost: held frames were neither applied nor
   * acknowledged, and the runner replays them in order.
   */
  Optional<String> overBudget(SequencedFrame f, Receipt r, long budget) {
    long held = account(f, r);
    if (held <= budget) {
      return Optional.empty();
    }
    dropHeld();
    return Optional.of(
        "held out-of-order frames reached " + held + " bytes, over the budget of " + budget);
  }

  /** Forgets every held frame (the runner replays them in order after it reconnects). */
  private void dropHeld() {
    seq.dropHeld();
    heldSizes.clear();
    heldBytes = 0;
  }
}
