package io.capsule.driver.wasi;

import io.capsule.driver.wasi.WasiHost.Guest;
import io.capsule.driver.wasi.WasiHost.HostFunction;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code wasi:io} for {@link WasiHost}: errors, pollables and streams over one instance's handle
 * table. stdin is at EOF; stdout and stderr go to their {@link OutputCapture}s; a pollable is ready
 * at once (a stream's) or at its monotonic instant (a clock's), and a wait on one that is not ready
 * traps, because a driver call may not block. Not thread-safe, like its host.
 */
final class WasiIo {
  private static final long[] NONE = new long[0];

  private final HandleTable handles;
  private final OutputCapture stdout;
  private final OutputCapture stderr;

  WasiIo(HandleTable handles, OutputCapture stdout, OutputCapture stderr) {
    this.handles = handles;
    this.stdout = stdout;
    this.stderr = stderr;
  }

  HostFunction error(String name) {
    if (!name.equals("[method]error.to-debug-string")) {
      return null;
    }
    return (g, a) -> {
      Object rep = handles.get((int) a[0], WasiHost.ERROR);
      byte[] text = String.valueOf(rep).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      int ptr = g.realloc(0, 0, 1, text.length);
      g.memory().storeBytes(ptr, text);
      g.memory().storeI32((int) a[1], ptr);
      g.memory().storeI32((int) a[1] + 4, text.length);
      return NONE;
    };
  }

  HostFunction poll(String name) {
    return switch (name) {
      case "[method]pollable.ready" ->
          (g, a) -> new long[] {ready(handles.get((int) a[0], WasiHost.POLLABLE)) ? 1 : 0};
      case "[method]pollable.block" ->
          (g, a) -> {
            if (!ready(handles.get((int) a[0], WasiHost.POLLABLE))) {
              throw new WasiTrap(notReady());
            }
            return NONE;
          };
      case "poll" ->
          (g, a) -> {
            int ptr = (int) a[0];
            int len = (int) a[1];
            if (len <= 0 || len > HandleTable.MAX_HANDLES) {
              throw new WasiTrap("wasi:io/poll#poll was given " + len + " pollables");
            }
            List<Integer> readyIndices = new ArrayList<>();
            for (int i = 0; i < len; i++) {
              if (ready(handles.get(g.memory().loadI32(ptr + 4 * i), WasiHost.POLLABLE))) {
                readyIndices.add(i);
              }
            }
            if (readyIndices.isEmpty()) {
              throw new WasiTrap(notReady());
            }
            int out = g.realloc(0, 0, 4, 4 * readyIndices.size());
            for (int i = 0; i < readyIndices.size(); i++) {
              g.memory().storeI32(out + 4 * i, readyIndices.get(i));
            }
            g.memory().storeI32((int) a[2], out);
            g.memory().storeI32((int) a[2] + 4, readyIndices.size());
            return NONE;
          };
      default -> null;
    };
  }

  /** A pollable: ready at once (streams) or at a monotonic instant (clocks). */
  record Deadline(long monotonicNanos) {}

  private static boolean ready(Object pollable) {
    return !(pollable instanceof Deadline d) || System.nanoTime() - d.monotonicNanos() >= 0;
  }

  private static String notReady() {
    return "the driver waited on a timer that has not fired; a driver call may not block";
  }

  HostFunction streams(String name) {
    return switch (name) {
      case "[method]input-stream.read", "[method]input-stream.blocking-read" ->
          (g, a) -> {
            handles.get((int) a[0], WasiHost.INPUT_STREAM);
            streamClosed(g, (int) a[2], 4);
            return NONE;
          };
      case "[method]input-stream.skip", "[method]input-stream.blocking-skip" ->
          (g, a) -> {
            handles.get((int) a[0], WasiHost.INPUT_STREAM);
            streamClosed(g, (int) a[2], 8);
            return NONE;
          };
      case "[method]input-stream.subscribe" ->
          (g, a) -> {
            handles.get((int) a[0], WasiHost.INPUT_STREAM);
            return new long[] {handles.add(WasiHost.POLLABLE, WasiHost.Stream.STDIN)};
          };
      case "[method]output-stream.check-write" ->
          (g, a) -> {
            output((int) a[0]);
            okU64(g, (int) a[1], 1 << 20);
            return NONE;
          };
      case "[method]output-stream.write", "[method]output-stream.blocking-write-and-flush" ->
          (g, a) -> {
            OutputCapture out = output((int) a[0]);
            int len = (int) a[2];
            if (len < 0) {
              throw new WasiTrap("the driver wrote a list of " + Integer.toUnsignedString(len));
            }
            int ptr = (int) a[1];
            // read only what the capture keeps, but the whole list must lie in the memory
            int keep = Math.min(len, out.room());
            byte[] head = g.memory().loadBytes(ptr, keep);
            if (len > keep) {
              g.memory().loadU8(ptr + len - 1);
            }
            out.write(head, len);
            g.memory().storeU8((int) a[3], (byte) 0);
            return NONE;
          };
      case "[method]output-stream.flush", "[method]output-stream.blocking-flush" ->
          (g, a) -> {
            output((int) a[0]);
            g.memory().storeU8((int) a[1], (byte) 0);
            return NONE;
          };
      case "[method]output-stream.write-zeroes",
          "[method]output-stream.blocking-write-zeroes-and-flush" ->
          (g, a) -> {
            output((int) a[0]).writeZeroes(a[1]);
            g.memory().storeU8((int) a[2], (byte) 0);
            return NONE;
          };
      case "[method]output-stream.splice", "[method]output-stream.blocking-splice" ->
          (g, a) -> {
            output((int) a[0]);
            handles.get((int) a[1], WasiHost.INPUT_STREAM);
            streamClosed(g, (int) a[3], 8);
            return NONE;
          };
      case "[method]output-stream.subscribe" ->
          (g, a) -> {
            output((int) a[0]);
            return new long[] {handles.add(WasiHost.POLLABLE, WasiHost.Stream.STDOUT)};
          };
      default -> null;
    };
  }

  private OutputCapture output(int handle) {
    return handles.get(handle, WasiHost.OUTPUT_STREAM) == WasiHost.Stream.STDOUT ? stdout : stderr;
  }

  /** {@code result::err(stream-error::closed)}: stdin is at EOF; the payload at {@code offset}. */
  private static void streamClosed(Guest g, int ret, int payloadOffset) {
    g.memory().storeU8(ret, (byte) 1);
    g.memory().storeU8(ret + payloadOffset, (byte) 1);
  }

  private static void okU64(Guest g, int ret, long value) {
    g.memory().storeU8(ret, (byte) 0);
    g.memory().storeI64(ret + 8, value);
  }
}
