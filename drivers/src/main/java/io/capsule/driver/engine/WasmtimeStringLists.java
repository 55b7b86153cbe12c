package io.capsule.driver.engine;

import io.github.kawamuray.wasmtime.Extern;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The {@code cabi_realloc} calls of lowering a {@code list<string>}, made by a small helper module
 * ({@code src/main/wat/alloc-strings.wat}) instantiated in the driver's own store with the driver's
 * memory and {@code cabi_realloc} as its imports. Why: through wasmtime-java every host-to-guest
 * call costs tens of microseconds of JNI and dynamic marshalling (profiled: 60 % of a {@code parse}
 * call was the 17 crossings lowering 16 lines), while a call from WebAssembly to WebAssembly costs
 * nanoseconds. One helper call replaces one crossing per line. Most of a crossing's cost is
 * marshalling each parameter and result (a {@code Val}) through JNI, not the call itself (measured:
 * one call taking the first 16 lengths as 17 parameters was slower than two calls with 9 values in
 * all), so the helper's two exports pass one value each: {@code alloc_list(count)} allocates the
 * list and keeps it and the count in globals, the host writes the lengths, {@code alloc_strings()}
 * allocates the strings and returns the first bad pointer and its index packed in one i64.
 *
 * <p>Why the canonical ABI allows it: the guest's allocator sees the very calls {@code
 * store_list_into_range} makes — {@code cabi_realloc(0, 0, 1, len)} per string, in order, after the
 * list's — and when the export runs its memory holds exactly the bytes it would; only the caller of
 * the allocator and the moment each string's bytes are copied differ, neither of which the contract
 * gives a guest any way to rely on. Each string is still its own allocation, so the guest may free
 * each one.
 *
 * <p>The helper is bounded as every call is: the store's epoch deadline is set before it runs (a
 * looping allocator ends with {@code cause=deadline}); a trap in the guest's allocator is reported
 * as {@code cabi_realloc}'s. Not thread-safe: confined with its instance.
 */
final class WasmtimeStringLists {

  /** The helper module's bytes, built from {@code src/main/wat/alloc-strings.wat}. */
  static final String RESOURCE = "alloc-strings.wasm";

  private static final String LIST = "alloc_list";
  private static final String STRINGS = "alloc_strings";
  private static final CoreModule.FuncType LIST_TYPE =
      new CoreModule.FuncType(List.of(CoreModule.ValType.I32), List.of(CoreModule.ValType.I32));
  private static final CoreModule.FuncType STRINGS_TYPE =
      new CoreModule.FuncType(List.of(), List.of(CoreModule.ValType.I64));
  private static final long[] NO_ARGS = {};

  private final Store<?> store;
  private final Module module;
  private final Memory memory;
  private final Func realloc;
  private final long deadlineTicks;
  private final WasmtimeBufferMemory view;
  private final BiFunction<String, RuntimeException, RuntimeException> classify;
  private final long[] countArg = new long[1];
  private Instance instance;
  private WasmtimeExports exports;

  /**
   * @param realloc the driver's {@code cabi_realloc}, owned (disposed) by this object
   * @param classify what a failed call becomes, given {@code "cabi_realloc"} and wasmtime's error
   */
  WasmtimeStringLists(
      Store<?> store,
      Module module,
      Memory memory,
      Func realloc,
      long deadlineTicks,
      WasmtimeBufferMemory view,
      BiFunction<String, RuntimeException, RuntimeException> classify) {
    this.store = store;
    this.module = module;
    this.memory = memory;
    this.realloc = realloc;
    this.deadlineTicks = deadlineTicks;
    this.view = view;
    this.classify = classify;
  }

  /**
   * Allocates a list of {@code count} elements of 8 bytes, {@code cabi_realloc(0, 0, 4, 8 *
   * count)}, and remembers it and its count for {@link #allocateStrings}.
   *
   * @return the guest's pointer, unchecked
   */
  int allocateList(int count) {
    if (exports == null) {
      instantiate();
    }
    countArg[0] = count;
    return (int) exports.call(LIST, countArg)[0];
  }

  /**
   * Allocates each string of the list {@link #allocateList} made, whose length slots the caller has
   * written.
   *
   * @return {@code {pointer, index}}: index -1 when every pointer was good, else the first bad
   *     pointer and its element's index
   */
  int[] allocateStrings() {
    long packed = exports.call(STRINGS, NO_ARGS)[0];
    return new int[] {(int) packed, (int) (packed >> 32)};
  }

  private void instantiate() {
    try {
      // No start function: instantiating runs no guest code.
      instance =
          new Instance(store, module, List.of(Extern.fromMemory(memory), Extern.fromFunc(realloc)));
    } catch (RuntimeException e) {
      throw classify.apply("cabi_realloc", e);
    }
    exports =
        new WasmtimeExports(
            store,
            deadlineTicks,
            view,
            name -> {
              if (LIST.equals(name)) {
                return LIST_TYPE;
              }
              if (STRINGS.equals(name)) {
                return STRINGS_TYPE;
              }
              throw Failures.noSuchExport(name);
            },
            name -> instance.getFunc(store, name).orElseThrow(() -> Failures.noSuchExport(name)),
            (export, e) -> classify.apply("cabi_realloc", e));
  }

  void close() {
    if (exports != null) {
      exports.dispose();
    }
    if (instance != null) {
      instance.dispose();
    }
    realloc.dispose();
  }
}
