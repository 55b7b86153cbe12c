package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.abi.CanonicalAbi;
import io.capsule.driver.abi.ListType;
import io.capsule.driver.abi.Primitive;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.DriverTrap;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmEngine;
import io.capsule.driver.wasm.WasmInstance;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code parse(lines)} on wasmtime in one crossing ({@link WasmtimeStringLists#lowerAndCall}): the
 * deferred post-return, the list's allocations, the strings' bytes and the export in one helper
 * call. The {@code post-return-log} fixture logs every call the guest gets and allocates
 * deterministically, so the same log and the same memory on wasmtime (one crossing) and on Chicory
 * (one call per allocation, the host copying the bytes, then the export) mean the guest saw the
 * same calls and the same bytes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LowerAndCallTest {

  private static final long CAP = 2L << 20;
  private static final Duration DEADLINE = Duration.ofSeconds(10);
  private static final ListType LINES = new ListType(Primitive.STRING);

  private final WasmEngine wasmtime = new WasmtimeEngine();
  private final WasmEngine chicory = new ChicoryEngine();

  @AfterAll
  void close() {
    wasmtime.close();
    chicory.close();
  }

  private WasmInstance instance(WasmEngine engine) {
    return engine.compile(Fixtures.bytes("post-return-log"), CAP).instantiate(DEADLINE);
  }

  private static byte[][] utf8(List<String> lines) {
    byte[][] out = new byte[lines.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = lines.get(i).getBytes(StandardCharsets.UTF_8);
    }
    return out;
  }

  /** The host's lowering, then the call: what Chicory does, one call per allocation. */
  private static long[] lowerThenCall(WasmInstance instance, String export, List<String> lines) {
    long[] flat = new CanonicalAbi(instance.memory()).lowerFlat(LINES, lines);
    return instance.call(export, flat);
  }

  private static byte[] wholeMemory(WasmInstance instance) {
    GuestMemory memory = instance.memory();
    return memory.loadBytes(0, (int) memory.size());
  }

  /** The calls the fixture logged, in order. */
  private static List<Integer> log(WasmInstance instance) {
    GuestMemory memory = instance.memory();
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < memory.loadI32(0); i++) {
      out.add(memory.loadI32(4 + i * 4));
    }
    return out;
  }

  private static List<List<String>> batches() {
    List<List<String>> batches = new ArrayList<>();
    batches.add(List.of());
    batches.add(List.of("a", "bc"));
    List<String> lengths = new ArrayList<>();
    for (int n = 0; n <= 20; n++) {
      lengths.add("0123456789abcdefghijk".substring(0, n)); // every tail of an 8-byte copy
    }
    batches.add(lengths);
    // every tail of the 64-byte blocks, and the last eight of a longer string rewritten in place:
    // each byte differs from its neighbours, so a byte copied to the wrong place shows
    String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";
    List<String> blocks = new ArrayList<>();
    for (int n : new int[] {7, 8, 9, 15, 16, 17, 56, 63, 64, 65, 71, 72, 73, 127, 128, 129, 200}) {
      StringBuilder line = new StringBuilder();
      for (int k = 0; k < n; k++) {
        line.append(alphabet.charAt((k * 7 + n) % alphabet.length()));
      }
      blocks.add(line.toString());
    }
    batches.add(blocks);
    // (four lines: the fixture's post-return traps on three)
    batches.add(List.of("h\u00e9llo \u2603 \ud83d\ude00", "", "{\"type\":\"line\"}", "\u00ff"));
    batches.add(List.of("x".repeat(20_000), "after a long line"));
    return batches;
  }

  @Test
  void oneCrossingMakesTheSameCallsAndLeavesTheSameMemoryAsLoweringThenCalling() {
    try (WasmInstance w = instance(wasmtime);
        WasmInstance c = instance(chicory)) {
      assertFalse(c.callsWithStrings("f", 0), "chicory lowers, then calls");
      for (List<String> batch : batches()) {
        assertTrue(w.callsWithStrings("f", 0), "wasmtime takes f");
        long[] fused = w.callWithStrings("f", utf8(batch));
        long[] separate = lowerThenCall(c, "f", batch);
        assertArrayEquals(separate, fused, "f's result");
        assertArrayEquals(wholeMemory(c), wholeMemory(w), "the memory after f, " + batch.size());
        // the post-return, deferred on wasmtime into the next crossing, at once on Chicory
        w.call("cabi_post_f", fused);
        c.call("cabi_post_f", separate);
      }
      w.call("g");
      c.call("g");
      assertArrayEquals(wholeMemory(c), wholeMemory(w), "the whole log, the post-returns in it");
    }
  }

  @Test
  void onlyAnExportTakingTwoI32sAndReturningOneWithAtMostSixteenKibibytesOfBytesIsTaken() {
    try (WasmInstance w = instance(wasmtime)) {
      assertTrue(w.callsWithStrings("f", WasmtimeStringLists.MAX_STAGED));
      assertFalse(w.callsWithStrings("f", WasmtimeStringLists.MAX_STAGED + 1), "too many bytes");
      assertFalse(w.callsWithStrings("g", 0), "g takes nothing");
      assertFalse(w.callsWithStrings("cabi_post_f", 0), "one parameter, no result");
      assertFalse(w.callsWithStrings("no-such-export", 0));
    }
  }

  @Test
  void aBadPointerFromTheAllocatorIsRefusedAsLoweringRefusesItAndTheExportIsNotCalled() {
    // The fixture's allocator returns a misaligned list for 13 strings and an out-of-bounds
    // pointer for a string of 77 777 bytes.
    List<List<String>> cases =
        List.of(Collections.nCopies(13, "s"), List.of("ok", "z".repeat(77_777), "never allocated"));
    for (List<String> lines : cases) {
      try (WasmInstance w = instance(wasmtime);
          WasmInstance c = instance(chicory)) {
        AbiViolation fused =
            assertThrows(AbiViolation.class, () -> w.callWithStrings("f", utf8(lines)));
        AbiViolation separate =
            assertThrows(AbiViolation.class, () -> lowerThenCall(c, "f", lines));
        assertEquals(Code.E_RUN_034, fused.code());
        assertEquals(separate.getMessage(), fused.getMessage());
        // (the log only: Chicory's lowering copies each string as it is allocated, so "ok" is in
        // its memory; wasmtime copies after the last allocation, which here never came)
        assertEquals(log(c), log(w), "the same calls");
        assertFalse(log(w).contains(0x66000000 | lines.size()), "f was not called");
      }
    }
  }

  @Test
  void aDeferredPostReturnThatTrapsInTheCrossingIsADriverTrapNamingThePostReturn() {
    // cabi_post_f traps on 3, what f returns for three strings.
    try (WasmInstance w = instance(wasmtime)) {
      long[] three = w.callWithStrings("f", utf8(List.of("a", "b", "c")));
      w.call("cabi_post_f", three);
      DriverTrap e = assertThrows(DriverTrap.class, () -> w.callWithStrings("f", utf8(List.of())));
      assertEquals(Code.E_RUN_034, e.code());
      assertTrue(e.getMessage().contains("cabi_post_f"), e.getMessage());
    }
  }

  @Test
  void anExportThatTrapsInTheCrossingIsADriverTrapNamingTheExportNotTheAllocator() {
    // grow(pages, value) traps when the memory cannot grow by `pages` (here the count, 40, past
    // the fixture's 16-page maximum), after every allocation succeeded.
    try (WasmInstance w = instance(wasmtime)) {
      DriverTrap e =
          assertThrows(
              DriverTrap.class,
              () -> w.callWithStrings("grow", utf8(Collections.nCopies(40, "line"))));
      assertEquals(Code.E_RUN_034, e.code());
      assertEquals("trap", e.diagnostic().details().get("cause"));
      assertTrue(e.getMessage().contains("grow"), e.getMessage());
      assertFalse(e.getMessage().contains("cabi_realloc"), e.getMessage());
    }
  }
}
