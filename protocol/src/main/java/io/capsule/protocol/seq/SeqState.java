package io.capsule.protocol.seq;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException.ReplayOverflow;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskReport;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The sequencing discipline of runner protocol v1 for one side of one peer relation (a runner, or
 * the hub's view of one runner): pure, synchronous, no I/O, not thread-safe (confine it to one
 * actor or one stream stage).
 *
 * <p>Outbound, per task: {@link #emit} numbers frames 1, 2, 3, … and keeps them in a replay buffer
 * until {@link #ack} covers them; {@link #replayFor} gives what a peer lacks after a reconnect. The
 * buffer is bounded over all tasks: {@link #emit} on a full buffer throws {@link ReplayOverflow}
 * ({@code E-PRO-006}) and sequences nothing, never losing a frame silently.
 *
 * <p>Inbound, per task: {@link #receive} applies frames strictly in seq order, drops duplicates
 * (seq ≤ highest applied), holds frames above a gap (bounded per task; beyond that they are dropped
 * since the sender's replay brings them again in order). {@link #resumeMap} is what a runner puts
 * in {@code hello.resume}; {@link #takeAckMap} what a hub puts in {@code ack}.
 *
 * <p>A side that restarted has forgotten what it sent; the peer's {@link #ack} then names tasks
 * with frames it holds that this side has no record of, and this side numbers its next frames for
 * such a task after them (a restarted runner re-running a re-delivered task), so they are not
 * dropped as duplicates of the lost ones.
 *
 * <p>Task end: applying a {@code task.report} finishes the task on the receiving side (its outbound
 * buffer is released: nothing is re-delivered for a finished task); on the sending side the task's
 * state is released once an ack covers its report. A finished task is remembered (its last seq
 * only, for {@code finishedRetention} tasks) so a late replay of its frames is dropped as a
 * duplicate, never applied twice.
 */
public final class SeqState {

  private static final class Outbound {
    long lastSeq;

    Outbound(long lastSeq) {
      this.lastSeq = lastSeq;
    }

    final ArrayDeque<SequencedFrame> buffer = new ArrayDeque<>();
    long reportSeq; // 0 until the task's report is emitted
  }

  private static final class Inbound {
    long highest;
    final TreeMap<Long, SequencedFrame> held = new TreeMap<>();
  }

  private final int bufferBound;
  private final int holdBound;
  private final Map<String, Outbound> outbound = new LinkedHashMap<>();
  private final Map<String, Inbound> inbound = new LinkedHashMap<>();
  private final Map<String, Long> finished;
  private final Map<String, Long> floors = new HashMap<>();
  private final Set<String> finishedUnacked = new LinkedHashSet<>();
  private int buffered;

  public SeqState(int bufferBound, int holdBound, int finishedRetention) {
    if (bufferBound <= 0 || holdBound <= 0 || finishedRetention <= 0) {
      throw new IllegalArgumentException("bounds must be positive");
    }
    this.bufferBound = bufferBound;
    this.holdBound = holdBound;
    this.finished =
        new LinkedHashMap<>(16, 0.75f, false) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > finishedRetention;
          }
        };
  }

  public static SeqState of(ProtocolConfig config) {
    return new SeqState(config.replayBufferBound(), config.holdBound(), config.finishedRetention());
  }

  // ---------------------------------------------------------------- outbound

  /**
   * Numbers the frame with its task's next seq and buffers it for replay.
   *
   * @throws ReplayOverflow when the buffer holds {@code bufferBound} frames already; nothing
   *     changes
   */
  @SuppressWarnings("unchecked")
  public <F extends SequencedFrame> F emit(F frame) {
    if (buffered >= bufferBound) {
      throw new ReplayOverflow(
          "replay buffer full ("
              + bufferBound
              + " frames unacknowledged); task "
              + frame.taskId()
              + " cannot send");
    }
    Outbound out = outbound.computeIfAbsent(frame.taskId(), k -> new Outbound(floorOf(k, true)));
    F numbered = (F) frame.withSeq(out.lastSeq + 1);
    out.lastSeq++;
    out.buffer.addLast(numbered);
    buffered++;
    if (numbered instanceof TaskReport) {
      out.reportSeq = numbered.seq();
    }
    return numbered;
  }

  /**
   * What the peer lacks: per task with buffered frames, those above {@code peerHas.get(task)}
   * (every buffered frame of a task the peer does not list), in seq order; tasks in the order they
   * were first emitted. Pure query: pair it with {@link #ack} when {@code peerHas} is proof of
   * receipt.
   */
  public Map<String, List<SequencedFrame>> replayFor(Map<String, Long> peerHas) {
    Map<String, List<SequencedFrame>> out = new LinkedHashMap<>();
    for (Map.Entry<String, Outbound> e : outbound.entrySet()) {
      long has = peerHas.getOrDefault(e.getKey(), 0L);
      List<SequencedFrame> tail = new ArrayList<>();
      for (SequencedFrame f : e.getValue().buffer) {
        if (f.seq() > has) {
          tail.add(f);
        }
      }
      if (!tail.isEmpty()) {
        out.put(e.getKey(), List.copyOf(tail));
      }
    }
    return out;
  }

  /**
   * {@link #replayFor} flattened: every frame to re-send, one frame of each task in turn (each
   * task's in seq order). Taking the tasks in turn rather than one after the other lets every task
   * resume as soon as the peer has the first frames: after a failover a runner may bring hundreds
   * of frames for tens of tasks, and task by task the last one waited for all the others' backlog
   * (seconds, measured in HubClusterKillTest), though the peer needs only each task's own order.
   */
  public List<SequencedFrame> replayListFor(Map<String, Long> peerHas) {
    List<java.util.Iterator<SequencedFrame>> tasks = new ArrayList<>();
    replayFor(peerHas).values().forEach(frames -> tasks.add(frames.iterator()));
    List<SequencedFrame> all = new ArrayList<>();
    while (!tasks.isEmpty()) {
      tasks.removeIf(t -> !t.hasNext());
      tasks.forEach(t -> all.add(t.next()));
    }
    return all;
  }

  /**
   * The peer holds every frame up to the given seq per task: trim the buffer. When the ack covers a
   * task's report, the task's state on this side is released (outbound and inbound).
   */
  public void ack(Map<String, Long> acks) {
    for (Map.Entry<String, Long> e : acks.entrySet()) {
      Outbound out = outbound.get(e.getKey());
      if (out == null) {
        // The peer holds frames of an unfinished task this side has no record of sending: this
        // side restarted and lost them. Frames it sends for the task from now on are numbered
        // after the peer's, or the peer would drop them as duplicates of the lost ones.
        if (e.getValue() > 0 && !finished.containsKey(e.getKey())) {
          floors.merge(e.getKey(), e.getValue(), Math::max);
        }
        continue;
      }
      long upTo = e.getValue();
      while (!out.buffer.isEmpty() && out.buffer.peekFirst().seq() <= upTo) {
        out.buffer.removeFirst();
        buffered--;
      }
      if (out.reportSeq > 0 && upTo >= out.reportSeq) {
        outbound.remove(e.getKey());
        buffered -= out.buffer.size();
        Inbound in = inbound.remove(e.getKey());
        finished.put(e.getKey(), in == null ? 0L : in.highest);
      }
    }
  }

  /** Frames held for replay, over all tasks. */
  public int buffered() {
    return buffered;
  }

  /**
   * The last seq emitted for the task: 0 when none (or its state was released), or the peer's
   * acknowledged seq when this side restarted and the peer holds frames it lost (see {@link #ack}).
   */
  public long lastEmitted(String taskId) {
    Outbound out = outbound.get(taskId);
    return out == null ? floorOf(taskId, false) : out.lastSeq;
  }

  private long floorOf(String taskId, boolean take) {
    Long floor = take ? floors.remove(taskId) : floors.get(taskId);
    return floor == null ? 0 : floor;
  }

  /** Tasks with outbound state (frames sent and their report not yet acked). */
  public Set<String> outboundTasks() {
    return Collections.unmodifiableSet(new LinkedHashSet<>(outbound.keySet()));
  }

  // ---------------------------------------------------------------- inbound

  /** Applies, drops or holds one frame; see {@link Receipt}. */
  public Receipt receive(SequencedFrame frame) {
    String task = frame.taskId();
    long seq = frame.seq();
    Long done = finished.get(task);
    if (done != null) {
      // The peer re-sends a finished task's frames until it sees our ack: ack it again.
      finishedUnacked.add(task);
      return Receipt.of(seq <= done ? Receipt.Status.DUPLICATE : Receipt.Status.FINISHED, 0);
    }
    Inbound in = inbound.computeIfAbsent(task, k -> new Inbound());
    if (seq <= in.highest) {
      return Receipt.of(Receipt.Status.DUPLICATE, in.highest + 1);
    }
    if (seq > in.highest + 1) {
      if (in.held.containsKey(seq)) {
        return Receipt.of(Receipt.Status.DUPLICATE, in.highest + 1);
      }
      if (in.held.size() >= holdBound) {
        return Receipt.of(Receipt.Status.DROPPED, in.highest + 1);
      }
      in.held.put(seq, frame);
      return Receipt.of(Receipt.Status.HELD, in.highest + 1);
    }
    List<SequencedFrame> applied = new ArrayList<>(1);
    applied.add(frame);
    in.highest = seq;
    boolean report = frame instanceof TaskReport;
    for (Iterator<Map.Entry<Long, SequencedFrame>> it = in.held.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<Long, SequencedFrame> next = it.next();
      if (next.getKey() != in.highest + 1) {
        break;
      }
      it.remove();
      applied.add(next.getValue());
      in.highest = next.getKey();
      report |= next.getValue() instanceof TaskReport;
    }
    if (report) {
      finishInbound(task, in.highest);
      return new Receipt(Receipt.Status.APPLIED, applied, 0);
    }
    return new Receipt(Receipt.Status.APPLIED, applied, in.highest + 1);
  }

  /**
   * Counts the open task's frames up to {@code seq} as applied without receiving them: a receiver
   * restoring from a record that kept how many frames it applied, not the frames. Only raises; a
   * finished task is left as it is.
   *
   * @return the highest seq applied before
   */
  public long appliedUpTo(String taskId, long seq) {
    if (finished.containsKey(taskId)) {
      return finished.get(taskId);
    }
    Inbound in = inbound.computeIfAbsent(taskId, k -> new Inbound());
    long before = in.highest;
    in.highest = Math.max(before, seq);
    in.held.headMap(in.highest, true).clear();
    return before;
  }

  /**
   * Forgets every frame held above a gap, of every task: a receiver bounding its memory. Safe: a
   * held frame was never applied or acknowledged, so the sender still has it and replays it.
   */
  public void dropHeld() {
    inbound.values().forEach(in -> in.held.clear());
  }

  private void finishInbound(String task, long highest) {
    inbound.remove(task);
    finished.put(task, highest);
    finishedUnacked.add(task);
    Outbound out = outbound.remove(task);
    if (out != null) {
      buffered -= out.buffer.size();
    }
  }

  /** The highest seq applied per open task (finished tasks excluded): {@code hello.resume}. */
  public Map<String, Long> resumeMap() {
    Map<String, Long> out = new LinkedHashMap<>();
    inbound.forEach((task, in) -> out.put(task, in.highest));
    return out;
  }

  /**
   * The highest seq applied per open task, plus every task finished here that the peer has not yet
   * been told about (then forgotten from that list): the body of an {@code ack}.
   */
  public Map<String, Long> takeAckMap() {
    Map<String, Long> out = resumeMap();
    for (String task : finishedUnacked) {
      Long last = finished.get(task);
      if (last != null) {
        out.put(task, last);
      }
    }
    finishedUnacked.clear();
    return out;
  }

  /** True when the task has been finished here (its report applied or its report acked). */
  public boolean isFinished(String taskId) {
    return finished.containsKey(taskId);
  }

  /** Forgets everything about a task (its retention ended), buffered frames included. */
  public void release(String taskId) {
    Outbound out = outbound.remove(taskId);
    if (out != null) {
      buffered -= out.buffer.size();
    }
    inbound.remove(taskId);
    finished.remove(taskId);
    finishedUnacked.remove(taskId);
    floors.remove(taskId);
  }
}
