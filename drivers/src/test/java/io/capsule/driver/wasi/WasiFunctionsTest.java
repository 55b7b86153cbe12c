package io.capsule.driver.wasi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.capsule.driver.abi.ByteArrayGuestMemory;
import io.capsule.driver.wasm.GuestMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every function of every WASI 0.2 interface the issue lists, as WASI's WIT (0.2.0–0.2.12) defines
 * them — written out here from the WIT, independently of the host's table — is served, and nothing
 * else is; and each one, called with the arguments its core signature takes, returns its results or
 * traps with a reason, never fails inside the host.
 */
class WasiFunctionsTest {

  /** Interface → its functions, from the WASI 0.2 WIT files. */
  static final Map<String, List<String>> SPEC =
      Map.ofEntries(
          Map.entry(
              "wasi:cli/environment", List.of("get-environment", "get-arguments", "initial-cwd")),
          Map.entry("wasi:cli/exit", List.of("exit", "exit-with-code")),
          Map.entry("wasi:cli/stdin", List.of("get-stdin")),
          Map.entry("wasi:cli/stdout", List.of("get-stdout")),
          Map.entry("wasi:cli/stderr", List.of("get-stderr")),
          Map.entry("wasi:cli/terminal-input", List.of()),
          Map.entry("wasi:cli/terminal-output", List.of()),
          Map.entry("wasi:cli/terminal-stdin", List.of("get-terminal-stdin")),
          Map.entry("wasi:cli/terminal-stdout", List.of("get-terminal-stdout")),
          Map.entry("wasi:cli/terminal-stderr", List.of("get-terminal-stderr")),
          Map.entry("wasi:io/error", List.of("[method]error.to-debug-string")),
          Map.entry(
              "wasi:io/poll", List.of("[method]pollable.ready", "[method]pollable.block", "poll")),
          Map.entry(
              "wasi:io/streams",
              List.of(
                  "[method]input-stream.read",
                  "[method]input-stream.blocking-read",
                  "[method]input-stream.skip",
                  "[method]input-stream.blocking-skip",
                  "[method]input-stream.subscribe",
                  "[method]output-stream.check-write",
                  "[method]output-stream.write",
                  "[method]output-stream.blocking-write-and-flush",
                  "[method]output-stream.flush",
                  "[method]output-stream.blocking-flush",
                  "[method]output-stream.subscribe",
                  "[method]output-stream.write-zeroes",
                  "[method]output-stream.blocking-write-zeroes-and-flush",
                  "[method]output-stream.splice",
                  "[method]output-stream.blocking-splice")),
          Map.entry(
              "wasi:clocks/monotonic-clock",
              List.of("now", "resolution", "subscribe-instant", "subscribe-duration")),
          Map.entry("wasi:clocks/wall-clock", List.of("now", "resolution")),
          Map.entry("wasi:random/random", List.of("get-random-bytes", "get-random-u64")),
          Map.entry(
              "wasi:random/insecure",
              List.of("get-insecure-random-bytes", "get-insecure-random-u64")),
          Map.entry("wasi:random/insecure-seed", List.of("insecure-seed")),
          Map.entry("wasi:filesystem/preopens", List.of("get-directories")),
          Map.entry("wasi:filesystem/types", filesystemTypes()));

  private static List<String> filesystemTypes() {
    List<String> fns = new ArrayList<>();
    for (String m :
        List.of(
            "read-via-stream",
            "write-via-stream",
            "append-via-stream",
            "advise",
            "sync-data",
            "get-flags",
            "get-type",
            "set-size",
            "set-times",
            "read",
            "write",
            "read-directory",
            "sync",
            "create-directory-at",
            "stat",
            "stat-at",
            "set-times-at",
            "link-at",
            "open-at",
            "readlink-at",
            "remove-directory-at",
            "rename-at",
            "symlink-at",
            "unlink-file-at",
            "is-same-object",
            "metadata-hash",
            "metadata-hash-at")) {
      fns.add("[method]descriptor." + m);
    }
    fns.add("[method]directory-entry-stream.read-directory-entry");
    fns.add("filesystem-error-code");
    return fns;
  }

  static Stream<String> specFunctions() {
    return SPEC.entrySet().stream()
        .flatMap(e -> e.getValue().stream().map(fn -> e.getKey() + "#" + fn))
        .sorted();
  }

  @Test
  void theTableIsExactlyTheWitsFunctionsOfTheListedInterfaces() {
    assertEquals(
        new TreeSet<>(specFunctions().toList()), new TreeSet<>(WasiFunctions.all()), "functions");
    assertEquals(SPEC.keySet(), WasiInterfaces.SERVED, "interfaces");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("specFunctions")
  void everyFunctionIsServedAtAnyPatchVersion(String function) {
    int hash = function.indexOf('#');
    for (String v : List.of("0.2.0", "0.2.3", "0.2.12")) {
      assertTrue(
          WasiHost.serves(function.substring(0, hash) + "@" + v, function.substring(hash + 1)),
          function + "@" + v);
    }
  }

  @Test
  void nothingOutsideTheTableIsServed() {
    assertFalse(WasiHost.serves("wasi:filesystem/types@0.2.3", "[method]descriptor.chmod-at"));
    assertFalse(WasiHost.serves("wasi:cli/terminal-input@0.2.3", "get-terminal-stdin"));
    assertFalse(WasiHost.serves("wasi:clocks/timezone@0.2.3", "display"));
  }

  /**
   * Each function called over a byte-array memory with its signature's arguments — every i32 the
   * address 0x100 (as a handle: one never issued), every i64 the value 8 — gives as many results as
   * its signature or a {@link WasiTrap}, nothing else.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("specFunctions")
  void everyFunctionReturnsItsResultsOrTrapsWithAReason(String function) {
    int hash = function.indexOf('#');
    String iface = function.substring(0, hash);
    String name = function.substring(hash + 1);
    WasiFunctions.Signature sig = WasiFunctions.signature(iface, name).orElseThrow();
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(1 << 16);
    WasiHost.Guest guest =
        new WasiHost.Guest() {
          @Override
          public GuestMemory memory() {
            return memory;
          }

          @Override
          public int realloc(int oldPtr, int oldSize, int align, int newSize) {
            return memory.realloc(oldPtr, oldSize, align, newSize);
          }
        };
    List<String> params = sig.params().isEmpty() ? List.of() : List.of(sig.params().split(" "));
    long[] args = params.stream().mapToLong(t -> t.equals("i64") ? 8 : 0x100).toArray();
    try {
      long[] out = new WasiHost().function(iface + "@0.2.3", name).call(guest, args);
      assertEquals(sig.results().isEmpty() ? 0 : 1, out.length, "results of " + sig);
    } catch (WasiTrap trap) {
      assertFalse(trap.getMessage().isBlank());
    } catch (RuntimeException e) {
      fail(function + " failed inside the host", e);
    }
  }

  @Test
  void everyResourceDropsThroughEveryInterfaceThatNamesIt() {
    Set<String> checked = new TreeSet<>();
    for (String[] r :
        List.of(
            new String[] {"wasi:io/streams", "output-stream", "wasi:io/streams#output-stream"},
            new String[] {"wasi:cli/stdout", "output-stream", "wasi:io/streams#output-stream"},
            new String[] {"wasi:cli/stdin", "input-stream", "wasi:io/streams#input-stream"},
            new String[] {"wasi:io/streams", "pollable", "wasi:io/poll#pollable"},
            new String[] {"wasi:clocks/monotonic-clock", "pollable", "wasi:io/poll#pollable"},
            new String[] {"wasi:filesystem/types", "error", "wasi:io/error#error"},
            new String[] {
              "wasi:cli/terminal-stdout",
              "terminal-output",
              "wasi:cli/terminal-output#terminal-output"
            },
            new String[] {
              "wasi:filesystem/preopens", "descriptor", "wasi:filesystem/types#descriptor"
            })) {
      assertEquals(
          java.util.Optional.of(r[2]), WasiFunctions.resourceType(r[0], r[1]), r[0] + " " + r[1]);
      checked.add(r[2]);
    }
    assertEquals(6, checked.size());
    assertEquals(java.util.Optional.empty(), WasiFunctions.resourceType("wasi:cli/exit", "error"));
  }
}
