package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.DriverTrap;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmEngine;
import io.capsule.driver.wasm.WasmInstance;
import io.capsule.driver.wasm.WasmModule;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The engine seam, exercised directly through {@link WasmInstance#call} on both engines. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EngineTest {

  private static final long CAP = 2L << 20; // 2 MiB keeps the memory bomb quick
  private static final Duration DEADLINE = Duration.ofSeconds(10);
  private static final Duration SHORT = Duration.ofMillis(300);

  private final Map<String, WasmEngine> engines =
      Map.of("wasmtime", new WasmtimeEngine(), "chicory", new ChicoryEngine());

  @AfterAll
  void closeEngines() {
    engines.values().forEach(WasmEngine::close);
  }

  Stream<String> engines() {
    return Stream.of("wasmtime", "chicory");
  }

  private WasmInstance instance(String engine, String fixture, Duration deadline) {
    return engines.get(engine).compile(Fixtures.bytes(fixture), CAP).instantiate(deadline);
  }

  @ParameterizedTest
  @MethodSource("engines")
  void callsDescribeAfterInitializeAndReadsTheRecordItReturns(String engine) {
    try (WasmInstance i = instance(engine, "minimal", DEADLINE)) {
      long[] out = i.call(Fixtures.export("describe"));
      assertEquals(1, out.length);
      int record = (int) out[0];
      GuestMemory m = i.memory();
      int binaryPtr = m.loadI32(record + 8);
      int binaryLen = m.loadI32(record + 12);
      assertEquals(
          "fake-harness", new String(m.loadBytes(binaryPtr, binaryLen), StandardCharsets.UTF_8));
      assertEquals(1, m.loadU8(record + 32)); // interrupt: signal-int
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void reallocGrowsMemoryAndFreshViewsSeeTheGrownPart(String engine) {
    try (WasmInstance i = instance(engine, "minimal", DEADLINE)) {
      GuestMemory m = i.memory();
      long before = m.size();
      int p = m.realloc(0, 0, 8, 200_000);
      assertEquals(0, p % 8);
      assertTrue(m.size() > before, "memory grew");
      m.storeI64(p + 199_992, 0x0102030405060708L);
      assertEquals(0x0102030405060708L, m.loadI64(p + 199_992));
      assertEquals(0x08, m.loadU8(p + 199_992)); // little-endian
      m.storeBytes(p, new byte[] {1, 2, 3});
      assertArrayEquals(new byte[] {1, 2, 3}, m.loadBytes(p, 3));
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void outOfBoundsAccessIsAnAbiViolationNotAnIndexError(String engine) {
    try (WasmInstance i = instance(engine, "minimal", DEADLINE)) {
      GuestMemory m = i.memory();
      int end = (int) m.size();
      AbiViolation e = assertThrows(AbiViolation.class, () -> m.loadI32(end - 2));
      assertEquals(Code.E_RUN_034, e.code());
      assertThrows(AbiViolation.class, () -> m.loadBytes(-16, 4));
      assertThrows(AbiViolation.class, () -> m.loadBytes(0, -1));
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void aTrapIsADriverTrapAndTheNextInstanceWorks(String engine) {
    try (WasmInstance i = instance(engine, "parse-trap", DEADLINE)) {
      DriverTrap e = assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
      assertEquals(Code.E_RUN_034, e.code());
      assertEquals("trap", e.diagnostic().details().get("cause"));
    }
    try (WasmInstance i = instance(engine, "minimal", DEADLINE)) {
      assertEquals(1, i.call(Fixtures.export("parse"), 0, 0).length);
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void anEndlessLoopIsStoppedAtTheDeadlineAndLeavesTheThreadClean(String engine) {
    try (WasmInstance i = instance(engine, "parse-loop", SHORT)) {
      long start = System.nanoTime();
      DriverTrap e = assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      assertEquals("deadline", e.diagnostic().details().get("cause"), e.getMessage());
      assertTrue(tookMs >= 250 && tookMs < 5_000, "stopped after " + tookMs + " ms");
      assertFalse(Thread.currentThread().isInterrupted());
      // the deadline restarts before each call: a second overrun is caught again
      assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
    }
    try (WasmInstance i = instance(engine, "minimal", SHORT)) {
      assertEquals(1, i.call(Fixtures.export("describe")).length);
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void callsOverManyTicksEachGetTheirWholeDeadline(String engine) {
    try (WasmInstance i = instance(engine, "parse-loop", SHORT)) {
      // Quick calls for twice the deadline: wasmtime sets the store's deadline again only when the
      // epoch moved (StoreDeadline); one kept from an earlier call would end these with a trap.
      long end = System.nanoTime() + SHORT.toNanos() * 2;
      int calls = 0;
      while (System.nanoTime() < end) {
        assertEquals(1, i.call(Fixtures.export("describe")).length);
        calls++;
      }
      assertTrue(calls > 1, "calls: " + calls);
      long start = System.nanoTime();
      DriverTrap e = assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      assertEquals("deadline", e.diagnostic().details().get("cause"), e.getMessage());
      assertTrue(tookMs >= 250, "stopped after " + tookMs + " ms");
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void aMemoryBombStopsAtTheCapEvenWithoutADeclaredMaximum(String engine) {
    try (WasmInstance i = instance(engine, "parse-membomb", DEADLINE)) {
      DriverTrap e = assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
      assertEquals("trap", e.diagnostic().details().get("cause"));
      long size = i.memory().size();
      assertTrue(size <= CAP && size > CAP / 2, "memory ended at " + size + " bytes");
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void aModuleThatImportsAnythingIsRefusedNamingTheImport(String engine) {
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> engines.get(engine).compile(Fixtures.bytes("wasi-import"), CAP));
    assertEquals(Code.E_RUN_032, e.code());
    assertTrue(e.getMessage().contains("wasi_snapshot_preview1.fd_write"), e.getMessage());
  }

  @ParameterizedTest
  @MethodSource("engines")
  void garbageDoesNotCompile(String engine) {
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> engines.get(engine).compile("not wasm".getBytes(StandardCharsets.UTF_8), CAP));
    assertEquals(Code.E_RUN_032, e.code());
  }

  @ParameterizedTest
  @MethodSource("engines")
  void callingAMissingExportIsRefused(String engine) {
    try (WasmInstance i = instance(engine, "minimal", DEADLINE)) {
      assertFalse(i.hasExport("nope"));
      assertTrue(i.hasExport(Fixtures.export("parse")));
      DriverException e = assertThrows(DriverException.class, () -> i.call("nope"));
      assertEquals(Code.E_RUN_034, e.code());
    }
  }

  @ParameterizedTest
  @MethodSource("engines")
  void instancesOfOneModuleDoNotShareMemory(String engine) {
    WasmModule module = engines.get(engine).compile(Fixtures.bytes("minimal"), CAP);
    try (WasmInstance a = module.instantiate(DEADLINE);
        WasmInstance b = module.instantiate(DEADLINE)) {
      a.memory().storeI32(0x2000, 42);
      assertNotEquals(42, b.memory().loadI32(0x2000));
      assertEquals(module.sha256(), Sha256.hex(Fixtures.bytes("minimal")));
      assertTrue(module.functionExports().contains("cabi_realloc"));
    }
  }

  @Test
  void chicoryKeepsAnInterruptThatWasNotItsDeadline() {
    try (WasmInstance i = instance("chicory", "minimal", DEADLINE)) {
      Thread.currentThread().interrupt(); // e.g. the dispatcher shutting down
      DriverTrap e = assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
      assertEquals("trap", e.diagnostic().details().get("cause"));
      assertTrue(Thread.interrupted(), "the foreign interrupt is still pending (and now cleared)");
    }
  }

  @Test
  void theCacheCompilesEachArtifactOnce() {
    CompiledModuleCache cache = new CompiledModuleCache(engines.get("chicory"));
    WasmModule first = cache.compile(Fixtures.bytes("minimal"), CAP);
    assertSame(first, cache.compile(Fixtures.bytes("minimal"), CAP));
    assertEquals(1, cache.size());
    assertThrows(DriverException.class, () -> cache.compile(Fixtures.bytes("wasi-import"), CAP));
    assertEquals(1, cache.size());
  }

  @Test
  void anUnknownEngineNameIsASettingsError() {
    DriverException e = assertThrows(DriverException.class, () -> Engines.create("v8"));
    assertEquals(Code.E_CFG_001, e.code());
    try (WasmEngine w = Engines.create("chicory")) {
      assertEquals("chicory", w.name());
    }
  }
}
