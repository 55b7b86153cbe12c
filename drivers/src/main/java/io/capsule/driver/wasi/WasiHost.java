package io.capsule.driver.wasi;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.GuestMemory;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * WASI 0.2 for one driver instance, with empty grants (docs/run-semantics.md §1.2): no environment,
 * no arguments, no cwd, no preopened directories (so no descriptor can ever exist), stdin at EOF,
 * stdout and stderr accepted into {@link OutputCapture}s that become run notes, no terminal,
 * working clocks, random bytes, and {@code exit} a trap naming the status.
 *
 * <p>Functions are looked up by interface (any {@code 0.2.x}) and name, with the canonical ABI's
 * flattening: arguments and results as raw core values, results that flatten to more than one value
 * written through the return pointer the caller passes last. Resource handles live in this
 * instance's {@link HandleTable}.
 *
 * <p>Not thread-safe: one instance, one thread at a time (the run's driver actor).
 */
public final class WasiHost {

  /** How a host function reaches the guest: its memory and its allocator (from the lowering). */
  public interface Guest {
    GuestMemory memory();

    int realloc(int oldPtr, int oldSize, int align, int newSize);
  }

  /** One host function: raw core arguments in, raw core results out. */
  @FunctionalInterface
  public interface HostFunction {
    long[] call(Guest guest, long[] args);
  }

  /** The most random bytes one call may ask for (1 MiB); more is a trap, not an allocation. */
  public static final long MAX_RANDOM_BYTES = 1 << 20;

  static final String INPUT_STREAM = "wasi:io/streams#input-stream";
  static final String OUTPUT_STREAM = "wasi:io/streams#output-stream";
  static final String POLLABLE = "wasi:io/poll#pollable";
  static final String ERROR = "wasi:io/error#error";

  private static final long[] NONE = new long[0];
  private static final SecureRandom RANDOM = new SecureRandom();

  private enum Stream {
    STDIN,
    STDOUT,
    STDERR
  }

  private final HandleTable handles = new HandleTable();
  private final OutputCapture stdout = new OutputCapture("stdout");
  private final OutputCapture stderr = new OutputCapture("stderr");

  /** The handle table (for tests and diagnostics). */
  public HandleTable handles() {
    return handles;
  }

  /** What the driver wrote since the last drain, as notes (stdout first, then stderr). */
  public List<String> drainOutput() {
    List<String> notes = new ArrayList<>(stdout.drain());
    notes.addAll(stderr.drain());
    return notes;
  }

  /**
   * The host function for {@code iface#name}; {@code E-RUN-032} at load when the host does not
   * serve it.
   */
  public HostFunction function(String iface, String name) {
    String base =
        WasiInterfaces.served(iface).orElseThrow(() -> notServed(iface + "#" + name, iface));
    return lookup(base, name).orElseThrow(() -> notServed(iface + "#" + name, iface));
  }

  /** {@code resource.drop} for a resource an imported interface defines. */
  public HostFunction drop(String iface, String resource) {
    String base = WasiInterfaces.served(iface).orElseThrow(() -> notServed(resource, iface));
    String type = base + "#" + resource;
    return (g, a) -> {
      handles.drop((int) a[0], type);
      return NONE;
    };
  }

  /** Whether {@code iface#name} is served (for listings and tests). */
  public static boolean serves(String iface, String name) {
    return WasiInterfaces.served(iface)
        .flatMap(base -> new WasiHost().lookup(base, name))
        .isPresent();
  }

  private static DriverException notServed(String what, String iface) {
    return new DriverException(
        Diagnostic.of(
                Code.E_RUN_032,
                "the driver imports "
                    + what
                    + ", which this runtime does not serve (WASI 0.2 with empty grants only)")
            .with("import", iface));
  }

  private Optional<HostFunction> lookup(String iface, String name) {
    HostFunction f =
        switch (iface) {
          case "wasi:cli/environment" -> environment(name);
          case "wasi:cli/exit" -> exit(name);
          case "wasi:cli/stdin" ->
              name.equals("get-stdin") ? issue(INPUT_STREAM, Stream.STDIN) : null;
          case "wasi:cli/stdout" ->
              name.equals("get-stdout") ? issue(OUTPUT_STREAM, Stream.STDOUT) : null;
          case "wasi:cli/stderr" ->
              name.equals("get-stderr") ? issue(OUTPUT_STREAM, Stream.STDERR) : null;
          case "wasi:cli/terminal-stdin", "wasi:cli/terminal-stdout", "wasi:cli/terminal-stderr" ->
              name.startsWith("get-terminal-") ? this::none : null;
          case "wasi:cli/terminal-input", "wasi:cli/terminal-output" -> null;
          case "wasi:io/error" -> error(name);
          case "wasi:io/poll" -> poll(name);
          case "wasi:io/streams" -> streams(name);
          case "wasi:clocks/monotonic-clock" -> monotonic(name);
          case "wasi:clocks/wall-clock" -> wall(name);
          case "wasi:random/random", "wasi:random/insecure" -> random(name);
          case "wasi:random/insecure-seed" -> name.equals("insecure-seed") ? this::seed : null;
          case "wasi:filesystem/preopens" ->
              name.equals("get-directories") ? this::emptyList : null;
          case "wasi:filesystem/types" -> filesystem(name);
          default -> null;
        };
    return Optional.ofNullable(f);
  }

  // ---- wasi:cli

  private HostFunction environment(String name) {
    return switch (name) {
      case "get-environment", "get-arguments" -> this::emptyList;
      case "initial-cwd" -> this::none;
      default -> null;
    };
  }

  private HostFunction exit(String name) {
    return switch (name) {
      case "exit" ->
          (g, a) -> {
            throw new WasiTrap(
                "the driver called wasi:cli/exit#exit with status "
                    + (a[0] == 0 ? "ok" : "err")
                    + " (WASI 0.2's exit carries no other code); a driver may not exit");
          };
      case "exit-with-code" ->
          (g, a) -> {
            throw new WasiTrap(
                "the driver called wasi:cli/exit#exit-with-code with exit code "
                    + (a[0] & 0xff)
                    + "; a driver may not exit");
          };
      default -> null;
    };
  }

  private HostFunction issue(String type, Stream stream) {
    return (g, a) -> new long[] {handles.add(type, stream)};
  }

  /** An empty list result ({@code list<…>} through the return pointer). */
  private long[] emptyList(Guest g, long[] a) {
    int ret = (int) a[a.length - 1];
    GuestMemory m = g.memory();
    m.storeI32(ret, 4); // a non-null, aligned pointer for zero elements
    m.storeI32(ret + 4, 0);
    return NONE;
  }

  /** {@code option::none} through the return pointer. */
  private long[] none(Guest g, long[] a) {
    g.memory().storeU8((int) a[a.length - 1], (byte) 0);
    return NONE;
  }

  // ---- wasi:io

  private HostFunction error(String name) {
    if (!name.equals("[method]error.to-debug-string")) {
      return null;
    }
    return (g, a) -> {
      Object rep = handles.get((int) a[0], ERROR);
      byte[] text = String.valueOf(rep).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      int ptr = g.realloc(0, 0, 1, text.length);
      g.memory().storeBytes(ptr, text);
      g.memory().storeI32((int) a[1], ptr);
      g.memory().storeI32((int) a[1] + 4, text.length);
      return NONE;
    };
  }

  private HostFunction poll(String name) {
    return switch (name) {
      case "[method]pollable.ready" ->
          (g, a) -> new long[] {ready(handles.get((int) a[0], POLLABLE)) ? 1 : 0};
      case "[method]pollable.block" ->
          (g, a) -> {
            if (!ready(handles.get((int) a[0], POLLABLE))) {
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
              if (ready(handles.get(g.memory().loadI32(ptr + 4 * i), POLLABLE))) {
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
  private record Deadline(long monotonicNanos) {}

  private static boolean ready(Object pollable) {
    return !(pollable instanceof Deadline d) || System.nanoTime() - d.monotonicNanos() >= 0;
  }

  private static String notReady() {
    return "the driver waited on a timer that has not fired; a driver call may not block";
  }

  private HostFunction streams(String name) {
    return switch (name) {
      case "[method]input-stream.read", "[method]input-stream.blocking-read" ->
          (g, a) -> {
            handles.get((int) a[0], INPUT_STREAM);
            streamClosed(g, (int) a[2], 4);
            return NONE;
          };
      case "[method]input-stream.skip", "[method]input-stream.blocking-skip" ->
          (g, a) -> {
            handles.get((int) a[0], INPUT_STREAM);
            streamClosed(g, (int) a[2], 8);
            return NONE;
          };
      case "[method]input-stream.subscribe" ->
          (g, a) -> {
            handles.get((int) a[0], INPUT_STREAM);
            return new long[] {handles.add(POLLABLE, Stream.STDIN)};
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
            handles.get((int) a[1], INPUT_STREAM);
            streamClosed(g, (int) a[3], 8);
            return NONE;
          };
      case "[method]output-stream.subscribe" ->
          (g, a) -> {
            output((int) a[0]);
            return new long[] {handles.add(POLLABLE, Stream.STDOUT)};
          };
      default -> null;
    };
  }

  private OutputCapture output(int handle) {
    return handles.get(handle, OUTPUT_STREAM) == Stream.STDOUT ? stdout : stderr;
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

  // ---- wasi:clocks

  private HostFunction monotonic(String name) {
    return switch (name) {
      case "now" -> (g, a) -> new long[] {System.nanoTime()};
      case "resolution" -> (g, a) -> new long[] {1};
      case "subscribe-instant" -> (g, a) -> new long[] {handles.add(POLLABLE, new Deadline(a[0]))};
      case "subscribe-duration" ->
          (g, a) -> new long[] {handles.add(POLLABLE, new Deadline(System.nanoTime() + a[0]))};
      default -> null;
    };
  }

  private HostFunction wall(String name) {
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

  // ---- wasi:random

  private HostFunction random(String name) {
    return switch (name) {
      case "get-random-bytes", "get-insecure-random-bytes" ->
          (g, a) -> {
            if (a[0] < 0 || a[0] > MAX_RANDOM_BYTES) {
              throw new WasiTrap(
                  "the driver asked for "
                      + Long.toUnsignedString(a[0])
                      + " random bytes; at most "
                      + MAX_RANDOM_BYTES
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

  private long[] seed(Guest g, long[] a) {
    g.memory().storeI64((int) a[0], RANDOM.nextLong());
    g.memory().storeI64((int) a[0] + 8, RANDOM.nextLong());
    return NONE;
  }

  // ---- wasi:filesystem: no preopens, so no descriptor or directory stream can exist

  private HostFunction filesystem(String name) {
    if (name.equals("filesystem-error-code")) {
      return (g, a) -> {
        handles.get((int) a[0], ERROR);
        return none(g, a);
      };
    }
    for (String resource : List.of("descriptor", "directory-entry-stream")) {
      if (name.startsWith("[method]" + resource + ".")) {
        String type = "wasi:filesystem/types#" + resource;
        return (g, a) -> {
          handles.get((int) a[0], type);
          throw new WasiTrap("unreachable: a " + type + " handle was live");
        };
      }
    }
    return null;
  }
}
