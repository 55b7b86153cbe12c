package io.capsule.hub.events;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Puts a task's events from two feeds (the journal's query and the hub's live push) into one stream
 * with no gap and no repeat. A task's event ids are the runner's seqs of applied frames, which the
 * hub applies one after another ({@code n}, then {@code n + 1}); so an event is sent only when it
 * is the next id, one already sent is dropped, and one that runs ahead (the live push is quicker
 * than the journal's poll) is held until the journal fills the gap.
 *
 * <p>Pure and single-threaded: one instance per watcher, fed by one stream stage.
 */
public final class EventOrder {

  /** What {@link #offer} decided: the events to send now, or that too many are held. */
  public record Step(List<TaskEntry> send, boolean overflow) {}

  private final int maxHeld;
  private final TreeMap<Long, TaskEntry> held = new TreeMap<>();
  private long last;
  private boolean ended;

  /**
   * @param after the last id the watcher has (its {@code Last-Event-ID}), 0 for all
   * @param maxHeld how many events may wait for a gap to fill before the watcher is dropped
   */
  public EventOrder(long after, int maxHeld) {
    if (after < 0 || maxHeld < 1) {
      throw new IllegalArgumentException(
          "after >= 0 and maxHeld >= 1, not " + after + ", " + maxHeld);
    }
    this.last = after;
    this.maxHeld = maxHeld;
  }

  /** Takes one event from either feed; the report ends the stream (nothing after it is sent). */
  public Step offer(TaskEntry e) {
    if (ended || e.id() <= last) {
      return new Step(List.of(), false);
    }
    if (e.id() > last + 1) {
      held.put(e.id(), e);
      return new Step(List.of(), held.size() > maxHeld);
    }
    List<TaskEntry> out = new ArrayList<>();
    TaskEntry next = e;
    while (next != null && !ended) {
      out.add(next);
      last = next.id();
      ended = next.isReport();
      held.remove(last);
      next = held.get(last + 1);
    }
    if (ended) {
      held.clear();
    }
    return new Step(List.copyOf(out), false);
  }

  /** The last id sent (or the watcher's own), for a clear close that says where to resume. */
  public long last() {
    return last;
  }

  /** How many events wait for a gap to fill. */
  public int held() {
    return held.size();
  }

  /** The report, once sent: nothing more will be. */
  public boolean ended() {
    return ended;
  }
}
