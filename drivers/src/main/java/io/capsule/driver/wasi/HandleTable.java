package io.capsule.driver.wasi;

import java.util.ArrayList;
import java.util.List;

/**
 * One instance's resource handles (canonical ABI): a handle is an index into this table, 0 is never
 * valid, and each entry remembers its resource type. Every use checks the handle exists and has the
 * expected type; a dropped, never-issued or foreign handle is a {@link WasiTrap}. Freed slots are
 * reused, like the canonical ABI's free list. Not thread-safe: confined to the instance's thread.
 */
public final class HandleTable {

  /** How many handles one instance may hold at once; a guest leaking handles traps here. */
  public static final int MAX_HANDLES = 10_000;

  private record Entry(String type, Object rep) {}

  private final List<Entry> entries = new ArrayList<>(List.of(new Entry("", null)));
  private final List<Integer> free = new ArrayList<>();
  private int live;

  /** Issues an owned handle for {@code rep} of resource {@code type}. */
  public int add(String type, Object rep) {
    if (live >= MAX_HANDLES) {
      throw new WasiTrap("the driver holds " + MAX_HANDLES + " WASI handles and asked for more");
    }
    live++;
    Entry entry = new Entry(type, rep);
    if (!free.isEmpty()) {
      int handle = free.remove(free.size() - 1);
      entries.set(handle, entry);
      return handle;
    }
    entries.add(entry);
    return entries.size() - 1;
  }

  /** The representation behind a borrowed or owned handle of {@code type}. */
  public Object get(int handle, String type) {
    Entry e = entry(handle, type, "used");
    return e.rep();
  }

  /** {@code resource.drop}: the handle is gone afterwards; dropping it again traps. */
  public Object drop(int handle, String type) {
    Entry e = entry(handle, type, "dropped");
    entries.set(handle, null);
    free.add(handle);
    live--;
    return e.rep();
  }

  /** How many handles are live. */
  public int live() {
    return live;
  }

  private Entry entry(int handle, String type, String verb) {
    Entry e = handle > 0 && handle < entries.size() ? entries.get(handle) : null;
    if (e == null) {
      throw new WasiTrap(
          "the driver "
              + verb
              + " WASI handle "
              + Integer.toUnsignedString(handle)
              + " as a "
              + type
              + ", but no such handle is live (dropped already, or never issued)");
    }
    if (!e.type().equals(type)) {
      throw new WasiTrap(
          "the driver "
              + verb
              + " WASI handle "
              + handle
              + " as a "
              + type
              + ", but it is a "
              + e.type());
    }
    return e;
  }
}
