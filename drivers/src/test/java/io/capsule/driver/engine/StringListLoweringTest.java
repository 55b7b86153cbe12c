package io.capsule.driver.engine;

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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Lowering a {@code list<string>} on wasmtime makes its per-string {@code cabi_realloc} calls in
 * one helper call ({@link WasmtimeStringLists}); on Chicory the host makes them one by one. The
 * {@code minimal} fixture's allocator is a deterministic bump allocator, so equal pointers on both
 * engines mean the allocator saw the same calls, with the same arguments, in the same order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StringListLoweringTest {

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

  private static List<String> lines() {
    List<String> lines = new ArrayList<>(List.of("", "a", "h\u00e9llo \u2603 \ud83d\ude00", ""));
    lines.add("x".repeat(70_000)); // past the first page: the allocator grows memory in between
    for (int i = 0; i < 40; i++) {
      lines.add("{\"type\":\"line\",\"n\":" + i + "}");
    }
    return lines;
  }

  /** The list's {ptr, len} slots after lowering, then the list lifted back. */
  private static List<Object> lower(WasmInstance instance, List<String> lines) {
    GuestMemory memory = instance.memory();
    CanonicalAbi abi = new CanonicalAbi(memory);
    long[] flat = abi.lowerFlat(LINES, lines);
    List<Object> out = new ArrayList<>();
    int list = (int) flat[0];
    out.add(flat[0]);
    for (int i = 0; i < flat[1]; i++) {
      out.add(memory.loadI32(list + i * 8));
      out.add(memory.loadI32(list + i * 8 + 4));
    }
    out.add(abi.liftFlat(LINES, flat));
    return out;
  }

  @Test
  void theHelperMakesTheSameAllocationsAsOneCallPerStringAndTheListReadsBack() {
    try (WasmInstance w = wasmtime.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE);
        WasmInstance c = chicory.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE)) {
      assertTrue(w.memory().allocatesStringsInOneCall(), "wasmtime takes the helper path");
      assertFalse(c.memory().allocatesStringsInOneCall(), "chicory calls per string");
      for (int round = 0; round < 2; round++) {
        List<Object> viaHelper = lower(w, lines());
        List<Object> perString = lower(c, lines());
        assertEquals(perString, viaHelper);
        assertEquals(lines(), viaHelper.get(viaHelper.size() - 1));
      }
      assertEquals(List.of(), lower(w, List.of()).get(1));
    }
  }

  @Test
  void everyBatchSizeTheRuntimeUsesMatchesOneCallPerString() {
    // alloc_string_list allocates the list, then each string from the lengths the host wrote into
    // the scratch memory: empty, single and batch-sized lists give the per-string path's pointers
    // and slots, in order.
    try (WasmInstance w = wasmtime.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE);
        WasmInstance c = chicory.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE)) {
      for (int count : new int[] {0, 1, 2, 16, 17, 256}) {
        List<String> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          batch.add(i % 3 == 0 ? "" : "line " + i + " \u00e9".repeat(i));
        }
        List<Object> viaHelper = lower(w, batch);
        assertEquals(lower(c, batch), viaHelper, "count " + count);
        assertEquals(batch, viaHelper.get(viaHelper.size() - 1), "count " + count);
      }
    }
  }

  @Test
  void aListLongerThanTheScratchPageGrowsItAndStillMatchesOneCallPerString() {
    // One scratch page holds 16 384 lengths; 20 000 need a second, grown before the one call.
    List<String> many = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      many.add(Integer.toString(i, 36));
    }
    try (WasmInstance w = wasmtime.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE);
        WasmInstance c = chicory.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE)) {
      List<Object> small = lower(w, List.of("a", "bc"));
      assertEquals(lower(c, List.of("a", "bc")), small);
      List<Object> viaHelper = lower(w, many);
      assertEquals(lower(c, many), viaHelper);
      assertEquals(many, viaHelper.get(viaHelper.size() - 1));
    }
  }

  /** The calls the {@code post-return-log} fixture logged, in order (see its source). */
  private static List<Integer> log(WasmInstance instance) {
    GuestMemory memory = instance.memory();
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < memory.loadI32(0); i++) {
      out.add(memory.loadI32(4 + i * 4));
    }
    return out;
  }

  /**
   * Lowers {@code lines} and calls {@code f} with them, then its post-return, as GuestCall does.
   */
  private static void callF(WasmInstance instance, List<String> lines) {
    long[] flat = new CanonicalAbi(instance.memory()).lowerFlat(LINES, lines);
    long[] result = instance.call("f", flat);
    instance.call("cabi_post_f", result);
  }

  @Test
  void aDeferredPostReturnRunsFirstInTheNextHelperCallAndTheGuestSeesTheSameCallsInOrder() {
    // wasmtime defers cabi_post_f into the next list's helper call, or runs it before any other
    // call (g here); Chicory calls it at once. The guest's log of calls must be the same.
    List<Integer> expected =
        List.of(
            16,
            1,
            2,
            0x66000002,
            0x70000002, // list of 2, its strings, f, post-return
            8,
            3,
            0x66000001,
            0x70000001, // list of 1, its string, f, post-return
            0x67000000); // g
    for (WasmEngine engine : List.of(wasmtime, chicory)) {
      try (WasmInstance i =
          engine.compile(Fixtures.bytes("post-return-log"), CAP).instantiate(DEADLINE)) {
        callF(i, List.of("a", "bc"));
        callF(i, List.of("xyz"));
        i.call("g");
        assertEquals(expected, log(i), engine.name());
      }
    }
  }

  @Test
  void aPostReturnThatTrapsIsADriverTrapNamingItAtTheNextCallIntoTheInstance() {
    // cabi_post_f traps on 3, what f returns for three strings. Chicory reports it at once;
    // wasmtime, having deferred it, in the next call: the helper's or another export's.
    List<String> three = List.of("a", "b", "c");
    for (boolean viaHelper : new boolean[] {true, false}) {
      try (WasmInstance w =
          wasmtime.compile(Fixtures.bytes("post-return-log"), CAP).instantiate(DEADLINE)) {
        callF(w, three);
        DriverTrap e =
            assertThrows(
                DriverTrap.class,
                () -> {
                  if (viaHelper) {
                    callF(w, List.of("x"));
                  } else {
                    w.call("g");
                  }
                });
        assertEquals(Code.E_RUN_034, e.code());
        assertTrue(e.getMessage().contains("cabi_post_f"), e.getMessage());
        assertEquals(0x70000003, log(w).get(log(w).size() - 1), "the post-return ran last");
      }
    }
    try (WasmInstance c =
        chicory.compile(Fixtures.bytes("post-return-log"), CAP).instantiate(DEADLINE)) {
      DriverTrap e = assertThrows(DriverTrap.class, () -> callF(c, three));
      assertTrue(e.getMessage().contains("cabi_post_f"), e.getMessage());
    }
  }

  @Test
  void aBadPointerFromTheAllocatorIsRefusedInsideTheHelperAsOneCallPerStringRefusesIt() {
    // The fixture's allocator returns a misaligned list for 13 strings and an out-of-bounds
    // pointer for a string of 77 777 bytes: the helper stops there, and the host refuses the
    // pointer with the message a single cabi_realloc call gets, after the same calls.
    List<List<String>> cases =
        List.of(
            java.util.Collections.nCopies(13, "s"),
            List.of("ok", "z".repeat(77_777), "never allocated"));
    List<String> expected = List.of("not aligned to 4", "outside the guest's");
    for (int k = 0; k < cases.size(); k++) {
      List<String> lines = cases.get(k);
      try (WasmInstance w =
              wasmtime.compile(Fixtures.bytes("post-return-log"), CAP).instantiate(DEADLINE);
          WasmInstance c =
              chicory.compile(Fixtures.bytes("post-return-log"), CAP).instantiate(DEADLINE)) {
        AbiViolation viaHelper =
            assertThrows(
                AbiViolation.class, () -> new CanonicalAbi(w.memory()).lowerFlat(LINES, lines));
        AbiViolation perString =
            assertThrows(
                AbiViolation.class, () -> new CanonicalAbi(c.memory()).lowerFlat(LINES, lines));
        assertEquals(Code.E_RUN_034, viaHelper.code());
        assertTrue(viaHelper.getMessage().contains(expected.get(k)), viaHelper.getMessage());
        assertEquals(perString.getMessage(), viaHelper.getMessage());
        assertEquals(log(c), log(w), "the allocator saw the same calls");
      }
    }
  }

  @Test
  void anAllocatorThatTrapsInsideTheHelperIsADriverTrapOfCabiReallocAndTheNextInstanceWorks() {
    // 3 MiB does not fit under the 2 MiB cap: memory.grow fails and the allocator traps.
    List<String> tooBig = List.of("ok", "y".repeat(3 << 20));
    for (WasmEngine engine : List.of(wasmtime, chicory)) {
      try (WasmInstance i = engine.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE)) {
        DriverTrap e = assertThrows(DriverTrap.class, () -> lower(i, tooBig));
        assertEquals(Code.E_RUN_034, e.code());
        assertEquals("trap", e.diagnostic().details().get("cause"), engine.name());
        assertTrue(e.getMessage().contains("cabi_realloc"), e.getMessage());
      }
      try (WasmInstance i = engine.compile(Fixtures.bytes("minimal"), CAP).instantiate(DEADLINE)) {
        assertEquals(List.of("ok"), lower(i, List.of("ok")).get(3));
      }
    }
  }
}
