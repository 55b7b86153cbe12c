package io.capsule.driver.engine;

import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Val;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The one call path into a wasmtime instance's exports, shared by a single instance ({@link
 * WasmtimeInstance}) and a WASI graph's main instance ({@link WasmtimeGraphInstance}). Each export
 * is bound once — its {@link Func}, its signature and an argument array reused by every call, so a
 * call allocates only the binding's {@link Val}s and the results — and every call arms the store's
 * epoch deadline ({@link StoreDeadline}), then drops the memory view (a call may grow the memory).
 *
 * <p>Not thread-safe: one store, one thread at a time.
 */
final class WasmtimeExports {

  /** What a failed call becomes: the export's name and wasmtime's exception in. */
  private final BiFunction<String, RuntimeException, RuntimeException> classify;

  private final Store<?> store;
  private final StoreDeadline deadline;
  private final WasmtimeBufferMemory memory;
  private final Function<String, CoreModule.FuncType> signatures;
  private final Function<String, Func> lookup;
  private final Map<String, Bound> bound = new HashMap<>();

  /** One export, bound: its function, signature and reused argument array. */
  private record Bound(Func func, CoreModule.FuncType type, Val[] in) {}

  /**
   * @param signatures an export's core signature; throws for a name that is not a function export
   * @param lookup the export's {@link Func}, looked up once
   */
  WasmtimeExports(
      Store<?> store,
      StoreDeadline deadline,
      WasmtimeBufferMemory memory,
      Function<String, CoreModule.FuncType> signatures,
      Function<String, Func> lookup,
      BiFunction<String, RuntimeException, RuntimeException> classify) {
    this.store = store;
    this.deadline = deadline;
    this.memory = memory;
    this.signatures = signatures;
    this.lookup = lookup;
    this.classify = classify;
  }

  long[] call(String export, long[] args) {
    Bound b = bound.get(export);
    if (b == null) {
      CoreModule.FuncType type = signatures.apply(export);
      PreparedModule.checkArity(export, type, args);
      b = new Bound(lookup.apply(export), type, new Val[type.params().size()]);
      bound.put(export, b);
    }
    PreparedModule.checkArity(export, b.type, args);
    for (int i = 0; i < args.length; i++) {
      b.in[i] = toVal(b.type.params().get(i), args[i]);
    }
    Val[] out;
    try {
      deadline.arm();
      out = b.func.call(store, b.in);
    } catch (RuntimeException e) {
      throw classify.apply(export, e);
    } finally {
      memory.invalidate();
    }
    long[] results = new long[out.length];
    for (int i = 0; i < results.length; i++) {
      results[i] = raw(out[i]);
    }
    return results;
  }

  /** Frees every bound function; the exports cannot be called afterwards. */
  void dispose() {
    bound.values().forEach(b -> b.func.dispose());
    bound.clear();
  }

  static Val.Type valType(CoreModule.ValType t) {
    return switch (t) {
      case I32 -> Val.Type.I32;
      case I64 -> Val.Type.I64;
      case F32 -> Val.Type.F32;
      case F64 -> Val.Type.F64;
      default -> throw Failures.unloadable("a WASI function takes or returns a " + t);
    };
  }

  static Val toVal(CoreModule.ValType type, long raw) {
    return switch (type) {
      case I32 -> Val.fromI32((int) raw);
      case I64 -> Val.fromI64(raw);
      case F32 -> Val.fromF32(Float.intBitsToFloat((int) raw));
      case F64 -> Val.fromF64(Double.longBitsToDouble(raw));
      default -> throw new IllegalArgumentException("cannot pass a " + type + " value");
    };
  }

  /** i32 results are zero-extended, so both engines hand back the same bits. */
  static long raw(Val v) {
    return switch (v.getType()) {
      case I32 -> Integer.toUnsignedLong(v.i32());
      case I64 -> v.i64();
      case F32 -> Integer.toUnsignedLong(Float.floatToRawIntBits(v.f32()));
      case F64 -> Double.doubleToRawLongBits(v.f64());
      default -> throw new IllegalStateException("cannot return a " + v.getType() + " value");
    };
  }
}
