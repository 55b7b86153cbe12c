package io.capsule.driver.wasi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.abi.ByteArrayGuestMemory;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.GuestMemory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The WASI host's functions as the canonical ABI sees them (raw core values in and out, results
 * through the return pointer), over a byte-array memory: empty grants, the handle table's checks,
 * bounded output, working clocks. The engines run the same host; the fixture tests drive it from
 * real components on both.
 */
class WasiHostTest {

  private static final String V = "@0.2.3";
  private static final int RET = 0x100;

  private final ByteArrayGuestMemory memory = new ByteArrayGuestMemory(1 << 16);
  private final WasiHost host = new WasiHost();
  private final WasiHost.Guest guest =
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

  private long[] call(String iface, String fn, long... args) {
    return host.function(iface + V, fn).call(guest, args);
  }

  private int stdout() {
    return (int) call("wasi:cli/stdout", "get-stdout")[0];
  }

  @Test
  void theEnvironmentArgumentsAndCwdAreEmpty() {
    call("wasi:cli/environment", "get-environment", RET);
    assertEquals(0, memory.loadI32(RET + 4), "no environment variables");
    call("wasi:cli/environment", "get-arguments", RET);
    assertEquals(0, memory.loadI32(RET + 4), "no arguments");
    memory.storeU8(RET, (byte) 7);
    call("wasi:cli/environment", "initial-cwd", RET);
    assertEquals(0, memory.loadU8(RET), "option::none");
    call("wasi:filesystem/preopens", "get-directories", RET);
    assertEquals(0, memory.loadI32(RET + 4), "no preopened directory");
  }

  @Test
  void noTerminalIsAttached() {
    for (String t : List.of("stdin", "stdout", "stderr")) {
      memory.storeU8(RET, (byte) 1);
      call("wasi:cli/terminal-" + t, "get-terminal-" + t, RET);
      assertEquals(0, memory.loadU8(RET), t);
    }
  }

  @Test
  void stdinIsAtEndOfFile() {
    int stdin = (int) call("wasi:cli/stdin", "get-stdin")[0];
    call("wasi:io/streams", "[method]input-stream.read", stdin, 100, RET);
    assertEquals(1, memory.loadU8(RET), "result::err");
    assertEquals(1, memory.loadU8(RET + 4), "stream-error::closed");
  }

  @Test
  void stdoutAndStderrBecomeNotesLineByLine() {
    int out = stdout();
    int err = (int) call("wasi:cli/stderr", "get-stderr")[0];
    write(out, "hello\nworld\n");
    write(err, "oops\n");
    assertEquals(0, memory.loadU8(RET), "result::ok");
    assertEquals(
        List.of("driver stdout: hello", "driver stdout: world", "driver stderr: oops"),
        host.drainOutput());
    assertEquals(List.of(), host.drainOutput(), "drained");
  }

  @Test
  void writesPastTheCapAreAcceptedCountedAndDropped() {
    int out = stdout();
    byte[] chunk = "x".repeat(40_000).getBytes(StandardCharsets.UTF_8);
    memory.storeBytes(0x1000, chunk);
    for (int i = 0; i < 3; i++) {
      call("wasi:io/streams", "[method]output-stream.write", out, 0x1000, chunk.length, RET);
      assertEquals(0, memory.loadU8(RET), "every write is ok");
    }
    List<String> notes = host.drainOutput();
    assertEquals(2, notes.size());
    assertEquals("driver stdout: " + "x".repeat(OutputCapture.CAP_BYTES), notes.get(0));
    assertTrue(
        notes.get(1).contains((3 * 40_000 - OutputCapture.CAP_BYTES) + " more bytes dropped"),
        notes.get(1));
  }

  @Test
  void aWriteReachingPastTheMemoryIsAnAbiViolationEvenPastTheCap() {
    int out = stdout();
    int half = OutputCapture.CAP_BYTES / 2;
    for (int i = 0; i < 2; i++) {
      call("wasi:io/streams", "[method]output-stream.write", out, 0x1000, half, RET);
    }
    // the capture is full: nothing of this write is read, but its end is still checked
    DriverException e =
        assertThrows(
            DriverException.class,
            () ->
                call("wasi:io/streams", "[method]output-stream.write", out, 0x1000, 1 << 16, RET));
    assertEquals(Code.E_RUN_034, e.code());
  }

  @Test
  void checkWriteGrantsAPermitAndFlushSucceeds() {
    int out = stdout();
    call("wasi:io/streams", "[method]output-stream.check-write", out, RET);
    assertEquals(0, memory.loadU8(RET));
    assertTrue(memory.loadI64(RET + 8) > 0);
    call("wasi:io/streams", "[method]output-stream.blocking-flush", out, RET);
    assertEquals(0, memory.loadU8(RET));
  }

  @Test
  void aDroppedHandleCannotBeUsedOrDroppedAgain() {
    int out = stdout();
    WasiHost.HostFunction drop = host.drop("wasi:io/streams" + V, "output-stream");
    drop.call(guest, new long[] {out});
    WasiTrap again = assertThrows(WasiTrap.class, () -> drop.call(guest, new long[] {out}));
    assertTrue(again.getMessage().contains("no such handle is live"), again.getMessage());
    assertThrows(
        WasiTrap.class,
        () -> call("wasi:io/streams", "[method]output-stream.check-write", out, RET));
    assertEquals(0, host.handles().live());
  }

  @Test
  void eachInstanceHasItsOwnHandleTable() {
    int out = stdout();
    WasiHost other = new WasiHost();
    WasiTrap e =
        assertThrows(
            WasiTrap.class,
            () ->
                other
                    .function("wasi:io/streams" + V, "[method]output-stream.check-write")
                    .call(guest, new long[] {out, RET}));
    assertTrue(e.getMessage().contains("no such handle is live"), e.getMessage());
    assertEquals(1, host.handles().live());
    assertEquals(0, other.handles().live());
  }

  @Test
  void aResourceDropsUnderTheNameOfAnInterfaceThatUsesIt() {
    int out = stdout();
    // wit-component may alias output-stream from wasi:cli/stdout, which uses wasi:io/streams's
    host.drop("wasi:cli/stdout" + V, "output-stream").call(guest, new long[] {out});
    assertEquals(0, host.handles().live());
    DriverException e =
        assertThrows(DriverException.class, () -> host.drop("wasi:cli/exit" + V, "output-stream"));
    assertEquals(Code.E_RUN_032, e.code());
  }

  @Test
  void aHandleOfAnotherTypeIsRefused() {
    int stdin = (int) call("wasi:cli/stdin", "get-stdin")[0];
    WasiTrap e =
        assertThrows(
            WasiTrap.class,
            () -> call("wasi:io/streams", "[method]output-stream.check-write", stdin, RET));
    assertTrue(e.getMessage().contains("but it is a wasi:io/streams#input-stream"), e.getMessage());
  }

  static Stream<Arguments> neverIssued() {
    return Stream.of(
        Arguments.of("wasi:filesystem/types", "[method]descriptor.open-at"),
        Arguments.of("wasi:filesystem/types", "[method]descriptor.read-via-stream"),
        Arguments.of(
            "wasi:filesystem/types", "[method]directory-entry-stream.read-directory-entry"),
        Arguments.of("wasi:io/error", "[method]error.to-debug-string"),
        Arguments.of("wasi:io/poll", "[method]pollable.ready"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("neverIssued")
  void aHandleThatWasNeverIssuedTraps(String iface, String fn) {
    WasiTrap e = assertThrows(WasiTrap.class, () -> call(iface, fn, 3, 0, 0, 0, RET));
    assertTrue(e.getMessage().contains("WASI handle 3"), e.getMessage());
  }

  @Test
  void clocksWorkAndTheMonotonicOneNeverGoesBack() {
    long a = call("wasi:clocks/monotonic-clock", "now")[0];
    long b = call("wasi:clocks/monotonic-clock", "now")[0];
    assertTrue(b - a >= 0, a + " then " + b);
    call("wasi:clocks/wall-clock", "now", RET);
    assertTrue(memory.loadI64(RET) > 1_577_836_800L, "after 2020");
    assertTrue(Integer.toUnsignedLong(memory.loadI32(RET + 8)) < 1_000_000_000L, "nanoseconds");
  }

  @Test
  void aTimerThatHasNotFiredCannotBeWaitedOn() {
    int later = (int) call("wasi:clocks/monotonic-clock", "subscribe-duration", 60_000_000_000L)[0];
    assertEquals(0, call("wasi:io/poll", "[method]pollable.ready", later)[0]);
    assertThrows(WasiTrap.class, () -> call("wasi:io/poll", "[method]pollable.block", later));
    int now = (int) call("wasi:clocks/monotonic-clock", "subscribe-duration", 0)[0];
    assertEquals(1, call("wasi:io/poll", "[method]pollable.ready", now)[0]);
  }

  @Test
  void randomBytesAreAllocatedInTheGuestAndBounded() {
    call("wasi:random/random", "get-random-bytes", 32, RET);
    assertEquals(32, memory.loadI32(RET + 4));
    assertEquals(32, memory.reallocs().get(0).newSize());
    assertThrows(
        WasiTrap.class,
        () -> call("wasi:random/random", "get-random-bytes", WasiHost.MAX_RANDOM_BYTES + 1, RET));
  }

  @Test
  void exitEndsTheCallWithTheStatusInTheMessage() {
    WasiTrap ok = assertThrows(WasiTrap.class, () -> call("wasi:cli/exit", "exit", 0));
    assertTrue(ok.getMessage().contains("status ok"), ok.getMessage());
    WasiTrap err = assertThrows(WasiTrap.class, () -> call("wasi:cli/exit", "exit", 1));
    assertTrue(err.getMessage().contains("status err"), err.getMessage());
    WasiTrap code = assertThrows(WasiTrap.class, () -> call("wasi:cli/exit", "exit-with-code", 3));
    assertTrue(code.getMessage().contains("exit code 3"), code.getMessage());
  }

  static Stream<Arguments> notServed() {
    return Stream.of(
        Arguments.of("wasi:sockets/tcp@0.2.3", "[method]tcp-socket.connect"),
        Arguments.of("wasi:http/outgoing-handler@0.2.3", "handle"),
        Arguments.of("acme:host/fn", "call"),
        Arguments.of("wasi:cli/environment@0.3.0", "get-environment"),
        Arguments.of("wasi:cli/environment@0.2.3", "get-secret"));
  }

  @ParameterizedTest(name = "{0}#{1}")
  @MethodSource("notServed")
  void anythingElseIsRefusedAtLoad(String iface, String fn) {
    DriverException e = assertThrows(DriverException.class, () -> host.function(iface, fn));
    assertEquals(Code.E_RUN_032, e.code());
    assertTrue(e.getMessage().contains(iface + "#" + fn), e.getMessage());
  }

  @Test
  void anyPatchVersionOfZeroTwoIsServed() {
    for (String v : List.of("0.2.0", "0.2.3", "0.2.12", "0.2.99")) {
      assertTrue(WasiHost.serves("wasi:cli/stdout@" + v, "get-stdout"), v);
    }
    assertFalse(WasiHost.serves("wasi:cli/stdout@0.2.3-rc1", "get-stdout"));
    assertEquals("empty", WasiInterfaces.grant("wasi:io/streams@0.2.3"));
  }

  private void write(int stream, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    memory.storeBytes(0x1000, bytes);
    call(
        "wasi:io/streams",
        "[method]output-stream.blocking-write-and-flush",
        stream,
        0x1000,
        bytes.length,
        RET);
  }
}
