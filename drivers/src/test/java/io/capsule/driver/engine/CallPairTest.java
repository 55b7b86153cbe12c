package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.wasm.DriverTrap;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmEngine;
import io.capsule.driver.wasm.WasmInstance;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * On wasmtime an export of core type {@code (i32, i32) -> i32} ({@code parse}) is called through
 * the {@code call-pair} helper ({@link WasmtimeCallPairs}), its arguments and result passed through
 * the scratch memory and the memory's size reported by the helper; on Chicory the host calls it.
 * The {@code post-return-log} fixture logs each call of {@code f}, so equal logs and results on
 * both engines mean the guest saw the same call and the host got the same bits.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CallPairTest {

  private static final long CAP = 2L << 20;
  private static final Duration DEADLINE = Duration.ofSeconds(10);

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

  /** The calls the fixture logged, in order. */
  private static List<Integer> log(WasmInstance instance) {
    GuestMemory memory = instance.memory();
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < memory.loadI32(0); i++) {
      out.add(memory.loadI32(4 + i * 4));
    }
    return out;
  }

  @ParameterizedTest
  @CsvSource(
      textBlock =
          """
          # list,       count,      what f returns (its count), zero-extended
          0,            0,          0
          4096,         2,          2
          1,            2147483647, 2147483647
          -1,           -1,         4294967295
          -2147483648,  -2,         4294967294
          """)
  void theExportIsCalledOnceWithTheSameArgumentsAndItsResultHasTheSameBitsOnBothEngines(
      int list, int count, long expected) {
    try (WasmInstance w = instance(wasmtime);
        WasmInstance c = instance(chicory)) {
      long[] viaHelper = w.call("f", list, count);
      assertArrayEquals(new long[] {expected}, viaHelper);
      assertArrayEquals(c.call("f", list, count), viaHelper);
      assertEquals(List.of(0x66000000 | count), log(w), "f called once, nothing else");
      assertEquals(log(c), log(w));
      // and again on the same helper instance
      assertArrayEquals(new long[] {expected}, w.call("f", list, count));
    }
  }

  @Test
  void aGuestThatGrowsItsMemoryDuringTheCallIsReadAtItsNewSizeAndItsNewBytes() {
    // grow(pages, value) stores value in the memory's last 4 bytes and returns their address: the
    // host's view, taken before the call at one page, must be replaced when the helper reports the
    // larger size, and kept, still reading the guest's stores, when it reports the same size.
    for (WasmEngine engine : List.of(wasmtime, chicory)) {
      try (WasmInstance i = instance(engine)) {
        GuestMemory memory = i.memory();
        assertEquals(1 << 16, memory.size(), engine.name());
        int[][] rows = {{2, 0x5eed}, {0, 0x0dd}, {0, 0x77}, {1, 0x1234}};
        long pages = 1;
        for (int[] row : rows) {
          long at = i.call("grow", row[0], row[1])[0];
          pages += row[0];
          assertEquals(pages << 16, memory.size(), engine.name());
          assertEquals((pages << 16) - 4, at, engine.name());
          assertEquals(row[1], memory.loadI32((int) at), engine.name());
        }
      }
    }
  }

  @Test
  void aTrapInTheExportIsADriverTrapNamingTheExportAndTheInstanceStaysCallable() {
    // The fixture's memory may grow to 16 pages: 100 more fails and grow traps.
    for (WasmEngine engine : List.of(wasmtime, chicory)) {
      try (WasmInstance i = instance(engine)) {
        DriverTrap e = assertThrows(DriverTrap.class, () -> i.call("grow", 100, 1));
        assertEquals(Code.E_RUN_034, e.code());
        assertEquals("trap", e.diagnostic().details().get("cause"), engine.name());
        assertTrue(e.getMessage().contains("grow"), e.getMessage());
        assertEquals(1 << 16, i.memory().size(), engine.name());
      }
    }
  }

  @Test
  void aReportedSizeEqualToTheViewsKeepsItAndAnyOtherFetchesANewOneWithoutAskingTheMemory() {
    AtomicInteger fetches = new AtomicInteger();
    AtomicInteger asks = new AtomicInteger();
    int[] size = {1 << 16};
    WasmtimeBufferMemory view =
        new WasmtimeBufferMemory(
            null,
            () -> {
              fetches.incrementAndGet();
              return ByteBuffer.allocate(size[0]).order(ByteOrder.LITTLE_ENDIAN);
            },
            () -> {
              asks.incrementAndGet();
              return size[0];
            });
    assertEquals(1 << 16, view.size());
    view.invalidate();
    view.sizeIs(1 << 16);
    assertEquals(1 << 16, view.size());
    assertEquals(List.of(1, 0), List.of(fetches.get(), asks.get()), "kept, nothing asked");
    size[0] = 3 << 16;
    view.invalidate();
    view.sizeIs(3 << 16);
    assertEquals(3 << 16, view.size());
    assertEquals(List.of(2, 0), List.of(fetches.get(), asks.get()), "fetched, nothing asked");
    view.invalidate(); // a call without a report: the memory is asked
    assertEquals(3 << 16, view.size());
    assertEquals(List.of(2, 1), List.of(fetches.get(), asks.get()), "asked, kept");
  }
}
