package io.capsule.driver.wasi;

import io.capsule.driver.wasi.WasiHost.Guest;
import io.capsule.driver.wasi.WasiHost.HostFunction;
import java.security.SecureRandom;

/**
 * {@code wasi:clocks} and {@code wasi:random} for {@link WasiHost}: working clocks (monotonic in
 * nanoseconds from {@link System#nanoTime}, the wall clock from {@link java.time.Instant}) whose
 * subscriptions are pollables in the instance's handle table, and real random bytes, at most {@link
 * WasiHost#MAX_RANDOM_BYTES} a call. Not thread-safe, like its host.
 */
final class WasiClocksAndRandom {
  private static final long[] NONE = new long[0];
  private static final SecureRandom RANDOM = new SecureRandom();

  private final HandleTable handles;

  WasiClocksAndRandom(HandleTable handles) {
    this.handles = handles;
  }

  HostFunction monotonic(String name) {
    return switch (name) {
      case "now" -> (g, a) -> new long[] {System.nanoTime()};
      case "resolution" -> (g, a) -> new long[] {1};
      case "subscribe-instant" ->
          (g, a) -> new long[] {handles.add(WasiHost.POLLABLE, new WasiIo.Deadline(a[0]))};
      case "subscribe-duration" ->
          (g, a) ->
              new long[] {
                handles.add(WasiHost.POLLABLE, new WasiIo.Deadline(System.nanoTime() + a[0]))
              };
      default -> null;
    };
  }

  HostFunction wall(String name) {
    return switch (name) {
      case "now" ->
          (g, a) -> {
            java.time.Instant now = java.time.Instant.now();
            datetime(g, (int) a[0], now.getEpochSecond(), now.getNano());
            return NONE;
          };
      case "resolution" ->
          (g, a) -> {
            datetime(g, (int) a[0], 0, 1000);
            return NONE;
          };
      default -> null;
    };
  }

  private static void datetime(Guest g, int ret, long seconds, int nanos) {
    g.memory().storeI64(ret, seconds);
    g.memory().storeI32(ret + 8, nanos);
  }

  HostFunction random(String name) {
    return switch (name) {
      case "get-random-bytes", "get-insecure-random-bytes" ->
          (g, a) -> {
            if (a[0] < 0 || a[0] > WasiHost.MAX_RANDOM_BYTES) {
              throw new WasiTrap(
                  "the driver asked for "
                      + Long.toUnsignedString(a[0])
                      + " random bytes; at most "
                      + WasiHost.MAX_RANDOM_BYTES
                      + " per call");
            }
            byte[] bytes = new byte[(int) a[0]];
            RANDOM.nextBytes(bytes);
            int ptr = g.realloc(0, 0, 1, bytes.length);
            g.memory().storeBytes(ptr, bytes);
            g.memory().storeI32((int) a[1], ptr);
            g.memory().storeI32((int) a[1] + 4, bytes.length);
            return NONE;
          };
      case "get-random-u64", "get-insecure-random-u64" -> (g, a) -> new long[] {RANDOM.nextLong()};
      default -> null;
    };
  }

  long[] seed(Guest g, long[] a) {
    g.memory().storeI64((int) a[0], RANDOM.nextLong());
    g.memory().storeI64((int) a[0] + 8, RANDOM.nextLong());
    return NONE;
  }
}
