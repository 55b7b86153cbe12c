package io.capsule.bench.driver;

import io.capsule.driver.abi.CanonicalAbi;
import io.capsule.driver.abi.ContractCodec;
import io.capsule.driver.abi.ContractTypes;
import io.capsule.driver.abi.EventCodec;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ToolCallInfo;
import io.capsule.driver.api.Usage;
import io.capsule.driver.wasm.GuestMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The host's share of a {@code parse} call with no engine in the way: lowering a batch of stdout
 * lines into guest memory and lifting a batch of events back into contract records, over a plain
 * heap memory whose {@code cabi_realloc} is a bump allocator (reset at the start of each lowering).
 * The engine's own cost per call and per realloc comes on top (measured on the build machine:
 * wasmtime-java ~1 µs per call plus ~3 µs per value), so these figures are the floor the ABI adds.
 *
 * <p>{@code batch} follows docs/run-semantics.md §5: 1 line, a typical 16, and the 256-line
 * ceiling.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class AbiBench {

  /** A Claude Code stream-json assistant line of the usual ~620 bytes. */
  static final String LINE =
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_01XyZ\",\"type\":\"message\","
          + "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[{\"type\":"
          + "\"text\",\"text\":\"I'll look at the failing test first, then check how the parser"
          + " handles an empty batch — the stack trace points at LineFramer.\"}],"
          + "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":4,"
          + "\"cache_creation_input_tokens\":1532,\"cache_read_input_tokens\":14022,"
          + "\"output_tokens\":1,\"service_tier\":\"standard\"}},\"parent_tool_use_id\":null,"
          + "\"session_id\":\"5f0c3a4e-8f4e-4a55-9d6b-2f1d0f9b7c11\",\"uuid\":"
          + "\"a0f3c1d2-0000-4000-8000-000000000001\"}";

  @Param({"1", "16", "256"})
  public int batch;

  private HeapGuestMemory memory;
  private CanonicalAbi abi;
  private List<Object> lines;
  private int eventsPtr;
  private int heapMark;

  @Setup(Level.Trial)
  public void setUp() {
    memory = new HeapGuestMemory(64 << 20);
    abi = new CanonicalAbi(memory);
    List<String> batchLines = new ArrayList<>();
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < batch; i++) {
      batchLines.add(LINE);
      events.add(EventCodec.value(event(i)));
    }
    lines = ContractCodec.value(batchLines);
    eventsPtr = abi.storeNew(ContractTypes.EVENTS, events);
    heapMark = memory.top;
  }

  private static Event event(int i) {
    return switch (i % 3) {
      case 0 ->
          new Event.TextDelta(
              "I'll look at the failing test first, then check how the parser handles it.");
      case 1 ->
          new Event.ToolCall(
              new ToolCallInfo("toolu_01" + i, "Read", "{\"file_path\":\"/work/src/Main.java\"}"));
      default ->
          new Event.UsageReport(
              new Usage(
                  Optional.of(4L),
                  Optional.of(120L),
                  Optional.of(14022L),
                  Optional.of(1532L),
                  Optional.empty()));
    };
  }

  /**
   * {@code parse}'s argument: {@code batch} lines lowered as a {@code list<string>}. The heap is
   * reset inside the measured method (one field write) rather than in a per-invocation setup, whose
   * own overhead would swamp a one-line batch.
   */
  @Benchmark
  public long[] lowerParseLines() {
    memory.top = heapMark;
    return abi.lowerParams(ContractTypes.PARSE.params(), List.of(lines));
  }

  /** {@code parse}'s result: {@code batch} events lifted, validated and made records. */
  @Benchmark
  public List<Event> liftEvents() {
    return ContractCodec.events(abi.load(ContractTypes.EVENTS, eventsPtr));
  }

  /** A guest memory on a heap buffer; {@code cabi_realloc} bumps {@link #top}. */
  static final class HeapGuestMemory implements GuestMemory {
    final byte[] bytes;
    final ByteBuffer view;
    int top = 16;

    HeapGuestMemory(int size) {
      bytes = new byte[size];
      view = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public long size() {
      return bytes.length;
    }

    @Override
    public byte loadU8(int address) {
      return bytes[address];
    }

    @Override
    public short loadU16(int address) {
      return view.getShort(address);
    }

    @Override
    public int loadI32(int address) {
      return view.getInt(address);
    }

    @Override
    public long loadI64(int address) {
      return view.getLong(address);
    }

    @Override
    public byte[] loadBytes(int address, int length) {
      return Arrays.copyOfRange(bytes, address, address + length);
    }

    @Override
    public void storeU8(int address, byte value) {
      bytes[address] = value;
    }

    @Override
    public void storeU16(int address, short value) {
      view.putShort(address, value);
    }

    @Override
    public void storeI32(int address, int value) {
      view.putInt(address, value);
    }

    @Override
    public void storeI64(int address, long value) {
      view.putLong(address, value);
    }

    @Override
    public void storeBytes(int address, byte[] data) {
      System.arraycopy(data, 0, bytes, address, data.length);
    }

    @Override
    public int realloc(int oldPtr, int oldSize, int align, int newSize) {
      int start = (top + align - 1) / align * align;
      top = start + newSize;
      return start;
    }
  }
}
