package io.capsule.driver.wasi;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.GuestMemory;
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
 * instance's {@link HandleTable}. This class is the front door (lookup, {@code resource.drop}) and
 * {@code wasi:cli} and {@code wasi:filesystem}; {@link WasiIo} serves {@code wasi:io} and {@link
 * WasiClocksAndRandom} the clocks and random.
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

  enum Stream {
    STDIN,
    STDOUT,
    STDERR
  }

  private final HandleTable handles = new HandleTable();
  private final OutputCapture stdout = new OutputCapture("stdout");
  private final OutputCapture stderr = new OutputCapture("stderr");
  private final WasiIo io = new WasiIo(handles, stdout, stderr);
  private final WasiClocksAndRandom clocks = new WasiClocksAndRandom(handles);

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
        WasiInterfaces.served(iface)
            .filter(b -> WasiFunctions.signature(b, name).isPresent())
            .orElseThrow(() -> notServed(iface + "#" + name, iface));
    return lookup(base, name)
        .orElseThrow(() -> new IllegalStateException("WasiFunctions lists unserved " + name));
  }

  /**
   * {@code resource.drop} for a resource an imported interface defines or uses ({@code
   * output-stream} as {@code wasi:cli/stdout} names it is {@code wasi:io/streams}'s).
   */
  public HostFunction drop(String iface, String resource) {
    String type =
        WasiInterfaces.served(iface)
            .flatMap(base -> WasiFunctions.resourceType(base, resource))
            .orElseThrow(() -> notServed("resource " + resource, iface));
    return (g, a) -> {
      handles.drop((int) a[0], type);
      return NONE;
    };
  }

  /** Whether {@code iface#name} is served (for listings and tests). */
  public static boolean serves(String iface, String name) {
    return WasiInterfaces.served(iface)
        .filter(base -> WasiFunctions.signature(base, name).isPresent())
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
          case "wasi:io/error" -> io.error(name);
          case "wasi:io/poll" -> io.poll(name);
          case "wasi:io/streams" -> io.streams(name);
          case "wasi:clocks/monotonic-clock" -> clocks.monotonic(name);
          case "wasi:clocks/wall-clock" -> clocks.wall(name);
          case "wasi:random/random", "wasi:random/insecure" -> clocks.random(name);
          case "wasi:random/insecure-seed" -> name.equals("insecure-seed") ? clocks::seed : null;
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
