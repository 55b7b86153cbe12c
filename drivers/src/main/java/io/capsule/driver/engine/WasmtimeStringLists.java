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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The {@code cabi_realloc} calls of lowering a {@code list<string>}, made in one host call by a
 * small helper module ({@code src/main/wat/alloc-strings.wat}) instantiated in the driver's own
 * store with the driver's memory and {@code cabi_realloc} as its imports; and the previous call's
 * post-return, deferred into that same call. Why: through wasmtime-java every host-to-guest call
 * costs tens of microseconds of JNI and dynamic marshalling (profiled: 60 % of a {@code parse} call
 * was the 17 crossings lowering 16 lines), while a call from WebAssembly to WebAssembly costs
 * nanoseconds. Most of a crossing's cost is marshalling each parameter and result (a {@code Val})
 * through JNI, not the call itself (measured: one call taking the first 16 lengths as 17 parameters
 * was slower than two calls with 9 values in all), so the helper takes the count and returns one
 * packed i64. The lengths, and a pending post-return's argument, reach it through the memory of a
 * second module ({@code string-lengths.wat}), which the host writes through a direct buffer: the
 * driver's memory is the guest's, and only what its allocator returned is the host's to write. A
 * batch of {@code parse} costs two crossings: this helper and the export.
 *
 * <p>Why the canonical ABI allows it: the guest's allocator sees the very calls {@code
 * store_list_into_range} makes — {@code cabi_realloc(0, 0, 4, 8 * count)} for the list, then {@code
 * cabi_realloc(0, 0, 1, len)} per string in order, each element's slot written after its string's
 * allocation — and when the export runs its memory holds exactly the bytes it would; only the
 * caller of the allocator and the moment each string's bytes are copied differ, neither of which
 * the contract gives a guest any way to rely on. Each string is still its own allocation, so the
 * guest may free each one. A post-return runs after the caller has taken the lifted results and
 * before the instance is entered again (CanonicalABI.md {@code canon_lift}), which a deferred one
 * still does: the instance is entered next by the helper, which calls it first. What changes is
 * when a failing post-return is seen: at the next call into the instance, as that call's failure,
 * naming the post-return; never, when the instance is closed first.
 *
 * <p>The helper is bounded as every call is: the store's epoch deadline is set before it runs (a
 * looping allocator or post-return ends with {@code cause=deadline}); a trap in the guest's
 * allocator is reported as {@code cabi_realloc}'s, one in the post-return as its own. Not
 * thread-safe: confined with its instance.
 */
final class WasmtimeStringLists {

  /** The helper module's bytes, built from {@code src/main/wat/alloc-strings.wat}. */
  static final String RESOURCE = "alloc-strings.wasm";

  /** The scratch module's bytes, built from {@code src/main/wat/string-lengths.wat}. */
  static final String SCRATCH_RESOURCE = "string-lengths.wasm";

  /** {@link #allocate}'s high 32 bits when every allocation was good. */
  static final int ALL_GOOD = -1;

  /** {@link #allocate}'s high 32 bits when the list's own allocation was bad. */
  static final int BAD_LIST = -2;

  private static final String EXPORT = "alloc_string_list";
  private static final String POST_PREFIX = "cabi_post_";
  private static final CoreModule.FuncType TYPE =
      new CoreModule.FuncType(List.of(CoreModule.ValType.I32), List.of(CoreModule.ValType.I64));
  private static final CoreModule.FuncType POST_TYPE =
      new CoreModule.FuncType(List.of(CoreModule.ValType.I32), List.of());
  private static final int PAGE = 1 << 16;
  private static final int LENGTHS_AT = 8;

  private final Store<?> store;
  private final Function<String, Module> modules;
  private final Memory memory;
  private final Func realloc;
  private final long deadlineTicks;
  private final WasmtimeBufferMemory view;
  private final Function<String, CoreModule.FuncType> signatures;
  private final Function<String, Func> lookup;
  private final BiFunction<String, RuntimeException, RuntimeException> classify;
  private final long[] countArg = new long[1];

  /** One helper instance per post-return it calls; {@code ""} for the scratch's no-op. */
  private final Map<String, Helper> helpers = new HashMap<>();

  private Instance scratch;
  private Memory scratchMemory;
  private ByteBuffer scratchView;
  private String pendingPost;

  /** A helper instance, the function handles it was given (freed with it) and its export. */
  private record Helper(Instance instance, List<Func> imports, WasmtimeExports exports) {}

  /**
   * @param modules the compiled helper modules by resource name ({@link #RESOURCE}, {@link
   *     #SCRATCH_RESOURCE}), fetched at the first list
   * @param realloc the driver's {@code cabi_realloc}, owned (disposed) by this object
   * @param signatures a driver export's core signature
   * @param lookup a driver export's {@link Func}, a new handle this object owns
   * @param classify what a failed call becomes, given the guest function and wasmtime's error
   */
  WasmtimeStringLists(
      Store<?> store,
      Function<String, Module> modules,
      Memory memory,
      Func realloc,
      long deadlineTicks,
      WasmtimeBufferMemory view,
      Function<String, CoreModule.FuncType> signatures,
      Function<String, Func> lookup,
      BiFunction<String, RuntimeException, RuntimeException> classify) {
    this.store = store;
    this.modules = modules;
    this.memory = memory;
    this.realloc = realloc;
    this.deadlineTicks = deadlineTicks;
    this.view = view;
    this.signatures = signatures;
    this.lookup = lookup;
    this.classify = classify;
  }

  /**
   * Whether the call of {@code export} is a post-return this object runs at the start of the next
   * list it allocates (recorded if so): a {@code cabi_post_*} export taking one i32, with none
   * pending already. The caller calls {@link #pendingPost} before any other call into the instance.
   */
  boolean defers(String export, long[] args) {
    if (pendingPost != null
        || args.length != 1
        || !export.startsWith(POST_PREFIX)
        || !POST_TYPE.equals(signatures.apply(export))) {
      return false;
    }
    ensureScratch();
    scratchView.putInt(4, (int) args[0]);
    scratchView.putInt(0, 1);
    pendingPost = export;
    return true;
  }

  /**
   * The deferred post-return's export and argument, taken (no longer pending): the caller calls it
   * itself, before a call into the instance other than {@link #allocate}; {@code null} if none.
   */
  Map.Entry<String, Long> takePendingPost() {
    if (pendingPost == null) {
      return null;
    }
    Map.Entry<String, Long> out =
        Map.entry(pendingPost, Integer.toUnsignedLong(scratchView.getInt(4)));
    pendingPost = null;
    scratchView.putInt(0, 0);
    return out;
  }

  /**
   * Runs the pending post-return if there is one, then allocates a list of {@code lengths.length}
   * elements of 8 bytes and a string of each length, and stores each string's pointer and length in
   * its element, in one guest call. The caller checks that the list's size fits under 2 GiB.
   *
   * @return the list's pointer in the low 32 bits and {@link #ALL_GOOD} in the high 32; or the
   *     first bad pointer in the low 32 bits and in the high 32 {@link #BAD_LIST} or the index of
   *     the string it was for (nothing was stored through a bad pointer)
   */
  long allocate(int[] lengths) {
    ensureScratch();
    String post = pendingPost == null ? "" : pendingPost;
    Helper helper = helpers.get(post);
    if (helper == null) {
      helper = instantiate(post);
    }
    int count = lengths.length;
    ensureCapacity(count);
    ByteBuffer out = scratchView;
    for (int i = 0; i < count; i++) {
      out.putInt(LENGTHS_AT + i * 4, lengths[i]);
    }
    countArg[0] = count;
    try {
      return helper.exports.call(EXPORT, countArg)[0];
    } finally {
      pendingPost = null;
    }
  }

  /** Grows the scratch memory (a host call, no guest code) until it holds {@code count} lengths. */
  private void ensureCapacity(int count) {
    long needed = LENGTHS_AT + 4L * count;
    if (needed <= scratchView.capacity()) {
      return;
    }
    long pages = (needed + PAGE - 1) / PAGE - scratchView.capacity() / PAGE;
    try {
      scratchMemory.grow(store, pages);
    } catch (RuntimeException e) {
      throw classify.apply("cabi_realloc", e);
    }
    scratchView = scratchMemory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
  }

  private void ensureScratch() {
    if (scratch != null) {
      return;
    }
    try {
      // No start function: instantiating runs no guest code.
      scratch = new Instance(store, modules.apply(SCRATCH_RESOURCE), List.of());
    } catch (RuntimeException e) {
      throw classify.apply("cabi_realloc", e);
    }
    scratchMemory = scratch.getMemory(store, "scratch").orElseThrow();
    scratchView = scratchMemory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** A helper instance whose {@code post} import is the driver's {@code post} export. */
  private Helper instantiate(String post) {
    List<Func> owned = new ArrayList<>();
    Instance instance;
    try {
      Func postFunc = post.isEmpty() ? scratchFunc("no_post") : lookup.apply(post);
      owned.add(postFunc);
      List<Extern> imports = new ArrayList<>();
      imports.add(Extern.fromMemory(memory));
      imports.add(Extern.fromFunc(realloc));
      for (String name : List.of("length", "post_pending", "post_arg", "post_done")) {
        Func f = scratchFunc(name);
        owned.add(f);
        imports.add(Extern.fromFunc(f));
      }
      imports.add(Extern.fromFunc(postFunc));
      // No start function: instantiating runs no guest code.
      instance = new Instance(store, modules.apply(RESOURCE), imports);
    } catch (RuntimeException e) {
      owned.forEach(Func::dispose);
      throw classify.apply("cabi_realloc", e);
    }
    WasmtimeExports exports =
        new WasmtimeExports(
            store,
            deadlineTicks,
            view,
            name -> {
              if (EXPORT.equals(name)) {
                return TYPE;
              }
              throw Failures.noSuchExport(name);
            },
            name -> instance.getFunc(store, name).orElseThrow(() -> Failures.noSuchExport(name)),
            // Still flagged: the post-return did not return, so it is what failed.
            (export, e) ->
                classify.apply(
                    !post.isEmpty() && scratchView.getInt(0) != 0 ? post : "cabi_realloc", e));
    Helper helper = new Helper(instance, owned, exports);
    helpers.put(post, helper);
    return helper;
  }

  private Func scratchFunc(String name) {
    return scratch.getFunc(store, name).orElseThrow(() -> Failures.noSuchExport(name));
  }

  void close() {
    for (Helper h : helpers.values()) {
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
    realloc.dispose();
  }
}
