package io.capsule.hub.http;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Counts open connections per remote address and in total, and says whether one more may open. Pure
 * bookkeeping (no sockets, no clock) so its rules are a table test; {@link GuardedBinding} calls it
 * from the accept loop and from each connection's termination, on any thread, hence the lock (held
 * for a map update only).
 *
 * <p>Every {@link Admission#ADMITTED} must be matched by exactly one {@link #release}; refusals
 * take nothing and need none.
 */
final class ConnectionLimits {

  /** What {@link #admit} decided. */
  enum Admission {
    ADMITTED,
    /**
     * This address already holds its share (checked first: one greedy address is the usual case).
     */
    OVER_ADDRESS,
    /** The whole server holds its cap. */
    OVER_TOTAL
  }

  private final int maxTotal;
  private final int maxPerAddress;
  private final Map<InetAddress, Integer> perAddress = new HashMap<>();
  private int total;

  ConnectionLimits(int maxTotal, int maxPerAddress) {
    if (maxTotal < 1 || maxPerAddress < 1) {
      throw new IllegalArgumentException(
          "connection limits must be >= 1, got total "
              + maxTotal
              + ", per address "
              + maxPerAddress);
    }
    this.maxTotal = maxTotal;
    this.maxPerAddress = maxPerAddress;
  }

  synchronized Admission admit(InetAddress address) {
    int mine = perAddress.getOrDefault(address, 0);
    if (mine >= maxPerAddress) {
      return Admission.OVER_ADDRESS;
    }
    if (total >= maxTotal) {
      return Admission.OVER_TOTAL;
    }
    perAddress.put(address, mine + 1);
    total++;
    return Admission.ADMITTED;
  }

  /** One admitted connection from {@code address} has ended. */
  synchronized void release(InetAddress address) {
    Integer mine = perAddress.get(address);
    if (mine == null) {
      throw new IllegalStateException("released a connection never admitted from " + address);
    }
    if (mine == 1) {
      perAddress.remove(address); // so the map holds only addresses with open connections
    } else {
      perAddress.put(address, mine - 1);
    }
    total--;
  }

  synchronized int open() {
    return total;
  }

  synchronized int open(InetAddress address) {
    return perAddress.getOrDefault(address, 0);
  }

  /** How many addresses hold at least one connection (the map never keeps empty entries). */
  synchronized int addresses() {
    return perAddress.size();
  }
}
