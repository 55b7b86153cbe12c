package io.capsule.runtime.core;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One trace line before it gets its timestamp: an {@code event_type} and ordered fields. Values are
 * strings, numbers, booleans, {@code null} (a member not reported: never written as 0), lists or
 * maps of those. Build with {@link #of(String)} and {@link #with(String, Object)}.
 *
 * <p>Immutable. {@link #with} does not copy the fields before it: a chain {@code of(..).with(..)
 * .with(..)} fills one pair of arrays once, each step appending after the last (issue #15: a copy
 * of the map per field, twice, was most of what building a run's records cost). A record that is
 * extended a second time, or one whose key is already there, gets its own copy, so no record ever
 * sees another's later fields.
 */
public record TraceRecord(String eventType, Map<String, Object> fields) {

  public TraceRecord {
    Objects.requireNonNull(eventType, "eventType");
    fields = fields instanceof Fields own ? own : Fields.copyOf(fields);
  }

  public static TraceRecord of(String eventType) {
    return new TraceRecord(eventType, Fields.EMPTY);
  }

  /**
   * A record with one more field, kept last (or, when {@code key} is there, its value replaced).
   */
  public TraceRecord with(String key, Object value) {
    return new TraceRecord(eventType, ((Fields) fields).with(key, value));
  }

  /** How many fields; with {@link #key} and {@link #value}, the fields in order without a view. */
  int size() {
    return ((Fields) fields).size;
  }

  String key(int i) {
    return ((Fields) fields).slab.keys[i];
  }

  Object value(int i) {
    return ((Fields) fields).slab.values[i];
  }

  /**
   * The first {@code size} entries of a slab, as an unmodifiable map in insertion order. Equal to
   * (and hashed like) any map with the same entries, as the {@code LinkedHashMap} before it was.
   */
  private static final class Fields extends AbstractMap<String, Object> {

    static final Fields EMPTY = new Fields(new Slab(0), 0);

    /**
     * Room for the longest record written per event ({@code tool_call}: 7 fields) and then some.
     */
    private static final int FIRST_CAPACITY = 8;

    final Slab slab;
    final int size;

    private Fields(Slab slab, int size) {
      this.slab = slab;
      this.size = size;
    }

    static Fields copyOf(Map<String, Object> map) {
      Slab slab = new Slab(Math.max(FIRST_CAPACITY, map.size()));
      int n = 0;
      for (Map.Entry<String, Object> e : map.entrySet()) {
        slab.keys[n] = e.getKey();
        slab.values[n] = e.getValue();
        n++;
      }
      slab.used.set(n);
      return new Fields(slab, n);
    }

    Fields with(String key, Object value) {
      int at = indexOf(key);
      if (at >= 0) {
        Slab copy = slab.copy(size, size);
        copy.values[at] = value;
        return new Fields(copy, size);
      }
      // Append in place when this is the slab's newest record and there is room; the claim is
      // atomic so two threads extending one shared record never both write the same slot.
      Slab target = slab;
      if (size >= target.keys.length || !target.used.compareAndSet(size, size + 1)) {
        target = slab.copy(size, Math.max(FIRST_CAPACITY, 2 * size));
        target.used.set(size + 1);
      }
      target.keys[size] = key;
      target.values[size] = value;
      return new Fields(target, size + 1);
    }

    private int indexOf(Object key) {
      String[] keys = slab.keys;
      for (int i = 0; i < size; i++) {
        if (Objects.equals(keys[i], key)) {
          return i;
        }
      }
      return -1;
    }

    @Override
    public int size() {
      return size;
    }

    @Override
    public boolean containsKey(Object key) {
      return indexOf(key) >= 0;
    }

    @Override
    public Object get(Object key) {
      int at = indexOf(key);
      return at < 0 ? null : slab.values[at];
    }

    @Override
    public Set<Map.Entry<String, Object>> entrySet() {
      return new AbstractSet<>() {
        @Override
        public int size() {
          return size;
        }

        @Override
        public Iterator<Map.Entry<String, Object>> iterator() {
          return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
              return next < size;
            }

            @Override
            public Map.Entry<String, Object> next() {
              if (next >= size) {
                throw new NoSuchElementException();
              }
              int i = next++;
              return new AbstractMap.SimpleImmutableEntry<>(slab.keys[i], slab.values[i]);
            }
          };
        }
      };
    }
  }

  /**
   * Keys and values shared by a chain of records: record {@code n} of the chain reads the first
   * {@code n} slots, which never change once written; {@code used} is how many slots are taken.
   */
  private static final class Slab {
    final String[] keys;
    final Object[] values;
    final AtomicInteger used = new AtomicInteger();

    Slab(int capacity) {
      keys = new String[capacity];
      values = new Object[capacity];
    }

    /** A new slab holding the first {@code n} entries, with room for {@code capacity}. */
    Slab copy(int n, int capacity) {
      Slab s = new Slab(Math.max(n, capacity));
      System.arraycopy(keys, 0, s.keys, 0, n);
      System.arraycopy(values, 0, s.values, 0, n);
      s.used.set(n);
      return s;
    }
  }
}
