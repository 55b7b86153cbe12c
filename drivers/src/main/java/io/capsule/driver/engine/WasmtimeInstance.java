package io.capsule.driver.engine;

import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmInstance;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Val;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One wasmtime store + instance. The epoch deadline is set before instantiation (so a start
 * function and {@code _initialize} are bounded too) and again before every call.
 *
 * <p>Not thread-safe: a store must be used by one thread at a time; the run's driver actor owns it.
 */
final class WasmtimeInstance implements WasmInstance {

  private final Store<Void> store;
  private final Instance instance;
  private final PreparedModule prepared;
  private final long deadlineTicks;
  private final Duration deadline;
  private final Map<String, Func> funcs = new HashMap<>();
  private final Memory memory;
  private final WasmtimeBufferMemory guestMemory;
  private boolean closed;

  private WasmtimeInstance(
      Store<Void> store, Instance instance, PreparedModule prepared, Duration deadline) {
    this.store = store;
    this.instance = instance;
    this.prepared = prepared;
    this.deadline = deadline;
    this.deadlineTicks = EpochTicker.ticks(deadline);
    this.memory = instance.getMemory(store, "memory").orElse(null);
    this.guestMemory = new WasmtimeBufferMemory(this, this::buffer);
  }

  static WasmtimeInstance create(
      Engine engine, Module module, PreparedModule prepared, Duration deadline) {
    Store<Void> store = new Store<>(null, engine);
    Instance instance;
    try {
      store.setEpochDeadline(EpochTicker.ticks(deadline));
      instance = new Instance(store, module, List.of());
    } catch (RuntimeException e) {
      store.dispose();
      throw classify("instantiation", deadline, e);
    }
    WasmtimeInstance created = new WasmtimeInstance(store, instance, prepared, deadline);
    try {
      prepared.initialize(created);
    } catch (RuntimeException e) {
      created.close();
      throw e;
    }
    return created;
  }

  @Override
  public boolean hasExport(String name) {
    return prepared.functionExports().containsKey(name);
  }

  @Override
  public long[] call(String export, long... args) {
    if (closed) {
      throw new IllegalStateException("the instance is closed");
    }
    CoreModule.FuncType type = prepared.signature(export);
    PreparedModule.checkArity(export, type, args);
    Func func = funcs.computeIfAbsent(export, this::lookup);
    Val[] in = new Val[args.length];
    for (int i = 0; i < args.length; i++) {
      in[i] = toVal(type.params().get(i), args[i]);
    }
    Val[] out;
    try {
      store.setEpochDeadline(deadlineTicks);
      out = func.call(store, in);
    } catch (RuntimeException e) {
      throw classify(export, deadline, e);
    } finally {
      guestMemory.invalidate();
    }
    long[] results = new long[type.results().size()];
    for (int i = 0; i < results.length; i++) {
      results[i] = fromVal(out[i]);
    }
    return results;
  }

  private Func lookup(String export) {
    return instance.getFunc(store, export).orElseThrow(() -> Failures.noSuchExport(export));
  }

  @Override
  public GuestMemory memory() {
    if (memory == null) {
      throw Failures.noSuchExport("memory");
    }
    return guestMemory;
  }

  /** A fresh view of the memory, little-endian (the binding hands out big-endian buffers). */
  ByteBuffer buffer() {
    return memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    funcs.values().forEach(Func::dispose);
    funcs.clear();
    if (memory != null) {
      memory.dispose();
    }
    instance.dispose();
    store.dispose();
  }

  private static Val toVal(CoreModule.ValType type, long raw) {
    return switch (type) {
      case I32 -> Val.fromI32((int) raw);
      case I64 -> Val.fromI64(raw);
      case F32 -> Val.fromF32(Float.intBitsToFloat((int) raw));
      case F64 -> Val.fromF64(Double.longBitsToDouble(raw));
      default -> throw new IllegalArgumentException("cannot pass a " + type + " value");
    };
  }

  /** i32 results are zero-extended, so both engines hand back the same bits. */
  private static long fromVal(Val v) {
    return switch (v.getType()) {
      case I32 -> Integer.toUnsignedLong(v.i32());
      case I64 -> v.i64();
      case F32 -> Integer.toUnsignedLong(Float.floatToRawIntBits(v.f32()));
      case F64 -> Double.doubleToRawLongBits(v.f64());
      default -> throw new IllegalStateException("cannot return a " + v.getType() + " value");
    };
  }

  /**
   * Wasmtime reports a trap as a {@code WasmtimeException} whose text names the trap; an epoch
   * interruption says {@code wasm trap: INTERRUPT}.
   */
  private static DriverException classify(String export, Duration deadline, RuntimeException e) {
    String text = String.valueOf(e.getMessage());
    String lower = text.toLowerCase(java.util.Locale.ROOT);
    if (lower.contains("interrupt") || lower.contains("epoch")) {
      return Failures.deadline(export, deadline, e);
    }
    return Failures.trap(export, firstLine(text), e);
  }

  static String firstLine(String text) {
    int nl = text.indexOf('\n');
    return nl < 0 ? text : text.substring(0, nl);
  }
}
