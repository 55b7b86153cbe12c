package io.capsule.driver.engine;

import io.github.kawamuray.wasmtime.Extern;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The engine's own helper modules in one driver's store ({@link WasmtimeStringLists}, {@link
 * WasmtimeCallPairs}) and the scratch memory they share with the host ({@code
 * src/main/wat/scratch.wat}). Why: through wasmtime-java a host-to-guest call marshals each
 * parameter and result as a {@code Val} through JNI, which is most of a crossing's cost; a helper
 * instantiated in the driver's store calls the driver's exports for nanoseconds a call, and takes
 * its inputs from, and leaves its outputs in, the scratch memory, which the host reads and writes
 * through a direct buffer. So a helper's one export takes no parameters and returns no results.
 * Every helper also leaves the driver memory's size there when it returns, which the host hands to
 * the driver memory's view instead of asking wasmtime for the size ({@link #call}).
 *
 * <p>The scratch layout (little-endian, see {@code scratch.wat}): the offsets below. Not
 * thread-safe: confined with its instance.
 */
final class WasmtimeHelpers {

  /** The scratch module's bytes, built from {@code src/main/wat/scratch.wat}. */
  static final String SCRATCH_RESOURCE = "scratch.wasm";

  /** i32: 1 while a post-return is pending. */
  static final int POST_PENDING = 0;

  /** i32: the pending post-return's argument. */
  static final int POST_ARG = 4;

  /** i32: how many strings the list to allocate has. */
  static final int COUNT = 8;

  /** i32: the driver memory's size in pages when the last helper returned. */
  static final int PAGES = 12;

  /** i64: the last helper's result. */
  static final int RESULT = 16;

  /** i32 each: {@code call_pair}'s two arguments. */
  static final int ARGS = 24;

  /** i32: where the staged strings' bytes start ({@code lower_and_call}). */
  static final int BYTES_AT = 32;

  /** i32: set by {@code lower_and_call} right before it calls the export; the host clears it. */
  static final int CALLING = 36;

  /** i32 each: the lengths of the list's strings. */
  static final int LENGTHS = 40;

  /** What {@link #call} passes: every helper export takes nothing. */
  private static final long[] NO_ARGS = {};

  private static final CoreModule.FuncType NO_VALUES =
      new CoreModule.FuncType(List.of(), List.of());
  private static final int PAGE = 1 << 16;

  private final Store<?> store;
  private final Function<String, Module> modules;
  private final Memory memory;
  private final StoreDeadline deadline;
  private final WasmtimeBufferMemory view;
  private final List<Helper> helpers = new ArrayList<>();

  private Instance scratch;
  private Memory scratchMemory;
  private ByteBuffer scratchView;

  /**
   * One helper instance: its one export, the function handles it was given (freed with it), and
   * what a failed call of it becomes.
   */
  record Helper(Instance instance, String export, List<Func> imports, WasmtimeExports exports) {}

  /**
   * @param modules the compiled helper modules by resource name, fetched at first use
   * @param memory the driver's memory, imported by every helper
   * @param view the driver memory's view, told the size each helper reports
   */
  WasmtimeHelpers(
      Store<?> store,
      Function<String, Module> modules,
      Memory memory,
      StoreDeadline deadline,
      WasmtimeBufferMemory view) {
    this.store = store;
    this.modules = modules;
    this.memory = memory;
    this.deadline = deadline;
    this.view = view;
  }

  /**
   * The scratch memory's view, the scratch instantiated at the first use (no start function:
   * instantiating it runs no guest code).
   *
   * @param failure what a failure to instantiate becomes
   */
  ByteBuffer scratch(Function<RuntimeException, RuntimeException> failure) {
    if (scratch == null) {
      try {
        scratch = new Instance(store, modules.apply(SCRATCH_RESOURCE), List.of());
      } catch (RuntimeException e) {
        throw failure.apply(e);
      }
      scratchMemory = scratch.getMemory(store, "scratch").orElseThrow();
      scratchView = scratchMemory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
    }
    return scratchView;
  }

  /**
   * Grows the scratch memory (a host call, no guest code) until it holds {@code count} lengths;
   * returns its view, fresh if it grew.
   */
  ByteBuffer scratchForLengths(int count, Function<RuntimeException, RuntimeException> failure) {
    return scratchFor(LENGTHS + 4L * count, failure);
  }

  /** Where staged bytes start after {@code count} lengths: the next 8-byte boundary. */
  static int bytesAt(int count) {
    return (LENGTHS + 4 * count + 7) & ~7;
  }

  /**
   * Grows the scratch memory (a host call, no guest code) until it holds {@code needed} bytes;
   * returns its view, fresh if it grew.
   */
  ByteBuffer scratchFor(long needed, Function<RuntimeException, RuntimeException> failure) {
    ByteBuffer view = scratch(failure);
    if (needed <= view.capacity()) {
      return view;
    }
    long pages = (needed + PAGE - 1) / PAGE - view.capacity() / PAGE;
    try {
      scratchMemory.grow(store, pages);
    } catch (RuntimeException e) {
      throw failure.apply(e);
    }
    scratchView = scratchMemory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
    return scratchView;
  }

  /**
   * Instantiates a helper module whose imports are, in its import order, the driver's memory, the
   * {@code driver} functions, then the {@code scratchImports} exports of the scratch. The helper
   * owns every function handle it is given (disposed with it, or at once if instantiating fails).
   * No start function: instantiating it runs no guest code.
   *
   * @param classify what a failed call of the helper's export becomes, given wasmtime's error
   * @param failure what a failure to instantiate becomes
   */
  Helper instantiate(
      String resource,
      String export,
      List<Func> driver,
      List<String> scratchImports,
      Function<RuntimeException, RuntimeException> classify,
      Function<RuntimeException, RuntimeException> failure) {
    List<Func> owned = new ArrayList<>(driver);
    Instance instance;
    try {
      scratch(failure);
      List<Extern> imports = new ArrayList<>();
      imports.add(Extern.fromMemory(memory));
      driver.forEach(f -> imports.add(Extern.fromFunc(f)));
      for (String name : scratchImports) {
        Func f = scratchFunc(name);
        owned.add(f);
        imports.add(Extern.fromFunc(f));
      }
      instance = new Instance(store, modules.apply(resource), imports);
    } catch (RuntimeException e) {
      owned.forEach(Func::dispose);
      throw failure.apply(e);
    }
    BiFunction<String, RuntimeException, RuntimeException> onFailure =
        (name, e) -> classify.apply(e);
    WasmtimeExports exports =
        new WasmtimeExports(
            store,
            deadline,
            view,
            name -> {
              if (export.equals(name)) {
                return NO_VALUES;
              }
              throw Failures.noSuchExport(name);
            },
            name -> instance.getFunc(store, name).orElseThrow(() -> Failures.noSuchExport(name)),
            onFailure);
    Helper helper = new Helper(instance, export, owned, exports);
    helpers.add(helper);
    return helper;
  }

  /** The scratch's function export {@code name}, a new handle the caller owns. */
  Func scratchFunc(String name) {
    return scratch.getFunc(store, name).orElseThrow(() -> Failures.noSuchExport(name));
  }

  /**
   * Calls the helper's export (no values cross; the store's epoch deadline is armed first, as for
   * every call), then hands the driver memory's view the size the helper left in the scratch, so
   * the view is fetched again only when the memory grew; returns the helper's result, as the
   * scratch holds it.
   */
  long call(Helper helper) {
    helper.exports.call(helper.export, NO_ARGS);
    view.sizeIs(Integer.toUnsignedLong(scratchView.getInt(PAGES)) * PAGE);
    return scratchView.getLong(RESULT);
  }

  /** Frees every helper and the scratch; none can be called afterwards. */
  void close() {
    for (Helper h : helpers) {
      h.exports.dispose();
      h.instance.dispose();
      h.imports.forEach(Func::dispose);
    }
    helpers.clear();
    if (scratchMemory != null) {
      scratchMemory.dispose();
    }
    if (scratch != null) {
      scratch.dispose();
    }
  }
}
