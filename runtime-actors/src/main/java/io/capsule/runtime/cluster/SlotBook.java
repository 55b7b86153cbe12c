package io.capsule.runtime.cluster;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The run slots of one node (pure; no threads, no time): at most {@code capacity} holders, and at
 * most {@code queueMax} waiting in arrival order. A holder that asks again still holds (a start is
 * idempotent); a released or withdrawn slot goes to the longest waiter. The owner of the book
 * bounds each wait with its own timer and {@link #withdraw}s the waiter when it fires.
 *
 * @param <K> who holds or waits (one key per run)
 */
public final class SlotBook<K> {

  /** What an {@link #acquire} decided. */
  public enum Decision {
    /** The key holds a slot now. */
    GRANTED,
    /** Every slot is held: the key waits for one. */
    QUEUED,
    /** Every slot is held and the wait queue is full: refused now. */
    REFUSED
  }

  private final int capacity;
  private final int queueMax;
  private final Set<K> held = new LinkedHashSet<>();
  private final Deque<K> waiting = new ArrayDeque<>();
  private int peak;
  private long granted;

  public SlotBook(int capacity, int queueMax) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
    }
    if (queueMax < 0) {
      throw new IllegalArgumentException("queueMax must be at least 0, got " + queueMax);
    }
    this.capacity = capacity;
    this.queueMax = queueMax;
  }

  public Decision acquire(K key) {
    if (held.contains(key)) {
      return Decision.GRANTED;
    }
    if (waiting.contains(key)) {
      return Decision.QUEUED;
    }
    if (held.size() < capacity) {
      hold(key);
      return Decision.GRANTED;
    }
    if (waiting.size() < queueMax) {
      waiting.addLast(key);
      return Decision.QUEUED;
    }
    return Decision.REFUSED;
  }

  /**
   * The key gives up its slot or its place in the queue (it ended, stopped, or its wait ran out).
   *
   * @return the waiter that now holds the freed slot, if any
   */
  public Optional<K> withdraw(K key) {
    if (waiting.remove(key)) {
      return Optional.empty();
    }
    if (!held.remove(key)) {
      return Optional.empty();
    }
    K next = waiting.pollFirst();
    if (next == null) {
      return Optional.empty();
    }
    hold(next);
    return Optional.of(next);
  }

  public boolean holds(K key) {
    return held.contains(key);
  }

  public boolean waits(K key) {
    return waiting.contains(key);
  }

  public int held() {
    return held.size();
  }

  public int waitingCount() {
    return waiting.size();
  }

  /** The most slots ever held at once: never above the capacity. */
  public int peak() {
    return peak;
  }

  /** How many slots were ever granted (a repeated acquire by a holder counts once). */
  public long grantedTotal() {
    return granted;
  }

  private void hold(K key) {
    granted++;
    held.add(key);
    peak = Math.max(peak, held.size());
  }
}
