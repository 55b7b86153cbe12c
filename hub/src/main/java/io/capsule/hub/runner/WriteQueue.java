package io.capsule.hub.runner;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Orders the hub's journal writes per key (a task): at most one write of a key is in flight; what
 * arrives for the key meanwhile waits and leaves as the next write, as one batch. That keeps each
 * task's entries in order without waiting for each other task, and turns a runner streaming faster
 * than one store round trip into few large {@code persistAll}s instead of many small ones. Pure: no
 * threads, no I/O; its owner starts the writes it hands out and reports each one done.
 *
 * <p>Items are offered in groups (the frames one runner frame applies) and a group is never split:
 * a task's entity stores it all or none. A batch closes at {@code maxBatch} items unless its first
 * group alone is larger.
 */
final class WriteQueue<T> {
  private final int maxBatch;
  private final Map<String, ArrayDeque<List<T>>> keys = new HashMap<>();
  private int waiting;

  WriteQueue(int maxBatch) {
    if (maxBatch <= 0) {
      throw new IllegalArgumentException("maxBatch must be positive");
    }
    this.maxBatch = maxBatch;
  }

  /**
   * Adds a group for a key. Returns the batch to write now, or an empty list when a write of the
   * key is in flight (the group waits for {@link #done}).
   */
  List<T> offer(String key, List<T> group) {
    if (group.isEmpty()) {
      return List.of();
    }
    ArrayDeque<List<T>> queue = keys.get(key);
    if (queue != null) {
      queue.addLast(List.copyOf(group));
      waiting += group.size();
      return List.of();
    }
    keys.put(key, new ArrayDeque<>());
    return List.copyOf(group);
  }

  /**
   * The key's write finished. Returns the next batch to write (the key stays busy), or an empty
   * list when nothing waits (the key is idle again).
   */
  List<T> done(String key) {
    ArrayDeque<List<T>> queue = keys.get(key);
    if (queue == null) {
      throw new IllegalStateException("no write of " + key + " is in flight");
    }
    if (queue.isEmpty()) {
      keys.remove(key);
      return List.of();
    }
    List<T> batch = new ArrayList<>(queue.removeFirst());
    while (!queue.isEmpty() && batch.size() + queue.peekFirst().size() <= maxBatch) {
      batch.addAll(queue.removeFirst());
    }
    waiting -= batch.size();
    return batch;
  }

  /** Forgets everything; returns the items that were waiting (the owner fails them). */
  List<T> drain() {
    List<T> out = new ArrayList<>();
    keys.values().forEach(q -> q.forEach(out::addAll));
    keys.clear();
    waiting = 0;
    return out;
  }

  /** Whether a write of the key is in flight. */
  boolean busy(String key) {
    return keys.containsKey(key);
  }

  /** Items waiting behind a write in flight, over all keys. */
  int waiting() {
    return waiting;
  }
}
