package io.capsule.driver.wasi;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every function of the WASI 0.2 interfaces the host serves (WASI's WIT as of 0.2.12; 0.2.0 has the
 * same functions but {@code exit-with-code}), with the core signature the canonical ABI flattens it
 * to, and every resource those interfaces define or {@code use}. This table is the authority:
 * {@link WasiHost} serves exactly these functions, and the component reader refuses a lowering
 * whose core type or options do not match (a malformed component, not a trap at the first call).
 * Pure.
 */
public final class WasiFunctions {
  private WasiFunctions() {}

  /**
   * A function's flattened core type and the canonical options a lowering of it needs.
   *
   * @param params core parameter types, space-separated ({@code i32}, {@code i64}); a result that
   *     flattens to more than one value adds a trailing {@code i32} return pointer
   * @param results core result types, space-separated (at most one)
   * @param memory whether it reads or writes guest memory (lists, strings, a return pointer)
   * @param realloc whether its result holds a list or string the host allocates in the guest
   */
  public record Signature(String params, String results, boolean memory, boolean realloc) {
    /** {@code (params) -> (results)}, as messages show it. */
    @Override
    public String toString() {
      return "(" + params + ") -> (" + results + ")";
    }
  }

  private static final Map<String, Signature> FUNCTIONS = new LinkedHashMap<>();
  private static final Map<String, String> RESOURCES = new LinkedHashMap<>();

  private static final int NONE = 0;
  private static final int MEM = 1;
  private static final int ALLOC = 3; // memory and realloc

  private static void fn(String iface, String name, String params, String results, int needs) {
    FUNCTIONS.put(
        iface + "#" + name, new Signature(params, results, (needs & MEM) != 0, needs == ALLOC));
  }

  /** {@code resource} as {@code iface} names it, defined by {@code definedIn}. */
  private static void resource(String definedIn, String resource, String... alsoUsedBy) {
    String type = definedIn + "#" + resource;
    RESOURCES.put(type, type);
    for (String iface : alsoUsedBy) {
      RESOURCES.put(iface + "#" + resource, type);
    }
  }

  static {
    String env = "wasi:cli/environment";
    fn(env, "get-environment", "i32", "", ALLOC);
    fn(env, "get-arguments", "i32", "", ALLOC);
    fn(env, "initial-cwd", "i32", "", ALLOC);
    fn("wasi:cli/exit", "exit", "i32", "", NONE);
    fn("wasi:cli/exit", "exit-with-code", "i32", "", NONE);
    fn("wasi:cli/stdin", "get-stdin", "", "i32", NONE);
    fn("wasi:cli/stdout", "get-stdout", "", "i32", NONE);
    fn("wasi:cli/stderr", "get-stderr", "", "i32", NONE);
    for (String t : List.of("stdin", "stdout", "stderr")) {
      fn("wasi:cli/terminal-" + t, "get-terminal-" + t, "i32", "", MEM);
    }

    fn("wasi:io/error", "[method]error.to-debug-string", "i32 i32", "", ALLOC);
    fn("wasi:io/poll", "[method]pollable.ready", "i32", "i32", NONE);
    fn("wasi:io/poll", "[method]pollable.block", "i32", "", NONE);
    fn("wasi:io/poll", "poll", "i32 i32 i32", "", ALLOC);
    String io = "wasi:io/streams";
    for (String read : List.of("read", "blocking-read")) {
      fn(io, "[method]input-stream." + read, "i32 i64 i32", "", ALLOC);
    }
    for (String skip : List.of("skip", "blocking-skip")) {
      fn(io, "[method]input-stream." + skip, "i32 i64 i32", "", MEM);
    }
    fn(io, "[method]input-stream.subscribe", "i32", "i32", NONE);
    fn(io, "[method]output-stream.check-write", "i32 i32", "", MEM);
    for (String write : List.of("write", "blocking-write-and-flush")) {
      fn(io, "[method]output-stream." + write, "i32 i32 i32 i32", "", MEM);
    }
    for (String flush : List.of("flush", "blocking-flush")) {
      fn(io, "[method]output-stream." + flush, "i32 i32", "", MEM);
    }
    fn(io, "[method]output-stream.subscribe", "i32", "i32", NONE);
    for (String zeroes : List.of("write-zeroes", "blocking-write-zeroes-and-flush")) {
      fn(io, "[method]output-stream." + zeroes, "i32 i64 i32", "", MEM);
    }
    for (String splice : List.of("splice", "blocking-splice")) {
      fn(io, "[method]output-stream." + splice, "i32 i32 i64 i32", "", MEM);
    }

    String mono = "wasi:clocks/monotonic-clock";
    fn(mono, "now", "", "i64", NONE);
    fn(mono, "resolution", "", "i64", NONE);
    fn(mono, "subscribe-instant", "i64", "i32", NONE);
    fn(mono, "subscribe-duration", "i64", "i32", NONE);
    fn("wasi:clocks/wall-clock", "now", "i32", "", MEM);
    fn("wasi:clocks/wall-clock", "resolution", "i32", "", MEM);
    fn("wasi:random/random", "get-random-bytes", "i64 i32", "", ALLOC);
    fn("wasi:random/random", "get-random-u64", "", "i64", NONE);
    fn("wasi:random/insecure", "get-insecure-random-bytes", "i64 i32", "", ALLOC);
    fn("wasi:random/insecure", "get-insecure-random-u64", "", "i64", NONE);
    fn("wasi:random/insecure-seed", "insecure-seed", "i32", "", MEM);

    fn("wasi:filesystem/preopens", "get-directories", "i32", "", ALLOC);
    filesystemTypes();

    resource("wasi:io/error", "error", "wasi:io/streams", "wasi:filesystem/types");
    resource("wasi:io/poll", "pollable", "wasi:io/streams", "wasi:clocks/monotonic-clock");
    resource("wasi:io/streams", "input-stream", "wasi:cli/stdin", "wasi:filesystem/types");
    resource(
        "wasi:io/streams",
        "output-stream",
        "wasi:cli/stdout",
        "wasi:cli/stderr",
        "wasi:filesystem/types");
    resource("wasi:cli/terminal-input", "terminal-input", "wasi:cli/terminal-stdin");
    resource(
        "wasi:cli/terminal-output",
        "terminal-output",
        "wasi:cli/terminal-stdout",
        "wasi:cli/terminal-stderr");
    resource("wasi:filesystem/types", "descriptor", "wasi:filesystem/preopens");
    resource("wasi:filesystem/types", "directory-entry-stream");
  }

  /** {@code wasi:filesystem/types}: new-timestamp flattens to i32 i64 i32, a path to i32 i32. */
  private static void filesystemTypes() {
    String fs = "wasi:filesystem/types";
    String d = "[method]descriptor.";
    String ts = "i32 i64 i32";
    fn(fs, d + "read-via-stream", "i32 i64 i32", "", MEM);
    fn(fs, d + "write-via-stream", "i32 i64 i32", "", MEM);
    fn(fs, d + "append-via-stream", "i32 i32", "", MEM);
    fn(fs, d + "advise", "i32 i64 i64 i32 i32", "", MEM);
    for (String self : List.of("sync-data", "get-flags", "get-type", "sync", "metadata-hash")) {
      fn(fs, d + self, "i32 i32", "", MEM);
    }
    fn(fs, d + "set-size", "i32 i64 i32", "", MEM);
    fn(fs, d + "set-times", "i32 " + ts + " " + ts + " i32", "", MEM);
    fn(fs, d + "read", "i32 i64 i64 i32", "", ALLOC);
    fn(fs, d + "write", "i32 i32 i32 i64 i32", "", MEM);
    fn(fs, d + "read-directory", "i32 i32", "", MEM);
    fn(fs, d + "stat", "i32 i32", "", MEM);
    fn(fs, d + "stat-at", "i32 i32 i32 i32 i32", "", MEM);
    fn(fs, d + "set-times-at", "i32 i32 i32 i32 " + ts + " " + ts + " i32", "", MEM);
    fn(fs, d + "link-at", "i32 i32 i32 i32 i32 i32 i32 i32", "", MEM);
    fn(fs, d + "open-at", "i32 i32 i32 i32 i32 i32 i32", "", MEM);
    fn(fs, d + "readlink-at", "i32 i32 i32 i32", "", ALLOC);
    for (String path : List.of("create-directory-at", "remove-directory-at", "unlink-file-at")) {
      fn(fs, d + path, "i32 i32 i32 i32", "", MEM);
    }
    fn(fs, d + "rename-at", "i32 i32 i32 i32 i32 i32 i32", "", MEM);
    fn(fs, d + "symlink-at", "i32 i32 i32 i32 i32 i32", "", MEM);
    fn(fs, d + "is-same-object", "i32 i32", "i32", NONE);
    fn(fs, d + "metadata-hash-at", "i32 i32 i32 i32 i32", "", MEM);
    fn(fs, "[method]directory-entry-stream.read-directory-entry", "i32 i32", "", ALLOC);
    fn(fs, "filesystem-error-code", "i32 i32", "", MEM);
  }

  /** Every served function, as {@code package:namespace/interface#name} (no version). */
  public static List<String> all() {
    return List.copyOf(FUNCTIONS.keySet());
  }

  /** The signature of {@code name} in served interface {@code iface} (unversioned). */
  public static Optional<Signature> signature(String iface, String name) {
    return Optional.ofNullable(FUNCTIONS.get(iface + "#" + name));
  }

  /**
   * The resource type a handle of {@code resource}, as {@code iface} names it (unversioned), is:
   * {@code wasi:io/streams#output-stream} also when {@code wasi:cli/stdout} names it.
   */
  public static Optional<String> resourceType(String iface, String resource) {
    return Optional.ofNullable(RESOURCES.get(iface + "#" + resource));
  }
}
