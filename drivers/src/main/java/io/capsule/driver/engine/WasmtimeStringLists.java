package io.capsule.driver.engine;

import io.github.kawamuray.wasmtime.Func;
import java.nio.ByteBuffer;
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
 * was slower than two calls with 9 values in all), so the helper takes no value and returns none:
 * the count, the lengths and a pending post-return's argument reach it, and its packed result and
 * the memory's size come back, through the scratch memory of {@link WasmtimeHelpers}, which the
 * host reads and writes through a direct buffer: the driver's memory is the guest's, and only what
 * its allocator returned is the host's to write. A batch of {@code parse} of at most {@link
 * #MAX_STAGED} bytes costs one crossing without a value ({@link #lowerAndCall}: the lowering, the
 * bytes copied in from the scratch and the export, all in one helper call); a larger one two, this
 * helper and the export through {@link WasmtimeCallPairs}. In the one crossing the post-return, the
 * allocations and the export share the one epoch deadline armed before it (the allocator's calls
 * take microseconds; a looping allocator still ends the call at the deadline, reported as {@code
 * cabi_realloc}'s).
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
 * <p>The helper is bounded as every call is: the store's epoch deadline is armed before it runs (a
 * looping allocator or post-return ends with {@code cause=deadline}); a trap in the guest's
 * allocator is reported as {@code cabi_realloc}'s, one in the post-return as its own. Not
 * thread-safe: confined with its instance.
 */
final class WasmtimeStringLists {

  /** The helper module's bytes, built from {@code src/main/wat/alloc-strings.wat}. */
  static final String RESOURCE = "alloc-strings.wasm";

  /** {@link #allocate}'s high 32 bits when every allocation was good. */
  static final int ALL_GOOD = -1;

  /** {@link #allocate}'s high 32 bits when the list's own allocation was bad. */
  static final int BAD_LIST = -2;

  private static final String EXPORT = "alloc_string_list";

  /** The fused helper's bytes, built from {@code src/main/wat/lower-call.wat}. */
  static final String LOWER_CALL_RESOURCE = "lower-call.wasm";

  private static final String LOWER_CALL_EXPORT = "lower_and_call";

  /**
   * The most bytes of strings {@link #lowerAndCall} stages in the scratch for one call. Why 16 KiB:
   * its copy (host into the scratch, then 64 bytes a call into the guest) costs more per byte than
   * the host's one copy into the guest, and by about 16–25 KiB that outweighs the crossing it saves
   * (measured: batches of 16 lines, 2–10 KiB, gained 6–13 %; batches of 256, 25–160 KiB, lost 3–6 %
   * against the two crossings). So the runtime's small batches take one crossing, its large ones
   * two.
   */
  static final long MAX_STAGED = 16 << 10;

  /** What {@link #lowerAndCall}'s helper imports from the scratch, in its import order. */
  private static final List<String> LOWER_CALL_IMPORTS =
      List.of(
          "length",
          "post_pending",
          "post_arg",
          "post_done",
          "count",
          "report",
          "bytes_at",
          "calling",
          "byte64",
          "byte8",
          "byte1");

  private static final String REALLOC = "cabi_realloc";
  private static final String POST_PREFIX = "cabi_post_";
  private static final CoreModule.FuncType POST_TYPE =
      new CoreModule.FuncType(List.of(CoreModule.ValType.I32), List.of());

  /** The scratch's exports the helper imports, in its import order. */
  private static final List<String> SCRATCH_IMPORTS =
      List.of("length", "post_pending", "post_arg", "post_done", "count", "report");

  private final WasmtimeHelpers helpers;
  private final Function<String, CoreModule.FuncType> signatures;
  private final Function<String, Func> lookup;
  private final BiFunction<String, RuntimeException, RuntimeException> classify;

  /** One helper instance per post-return it calls; {@code ""} for the scratch's no-op. */
  private final Map<String, WasmtimeHelpers.Helper> byPost = new HashMap<>();

  /**
   * One fused helper per post-return and export it calls, by post-return then export (no key made
   * per call: a concatenated key was a new string hashed at every {@code parse}).
   */
  private final Map<String, Map<String, WasmtimeHelpers.Helper>> byPostAndExport = new HashMap<>();

  /** Whether an export's core type lets {@link #lowerAndCall} take it, by export. */
  private final Map<String, Boolean> fusable = new HashMap<>();

  private String pendingPost;

  /**
   * @param helpers the store's helpers, whose scratch this object shares
   * @param signatures a driver export's core signature
   * @param lookup a driver export's {@link Func}, a new handle the caller owns
   * @param classify what a failed call becomes, given the guest function and wasmtime's error
   */
  WasmtimeStringLists(
      WasmtimeHelpers helpers,
      Function<String, CoreModule.FuncType> signatures,
      Function<String, Func> lookup,
      BiFunction<String, RuntimeException, RuntimeException> classify) {
    this.helpers = helpers;
    this.signatures = signatures;
    this.lookup = lookup;
    this.classify = classify;
  }

  /**
   * Whether the call of {@code export} is a post-return this object runs at the start of the next
   * list it allocates (recorded if so): a {@code cabi_post_*} export taking one i32, with none
   * pending already. The caller calls {@link #takePendingPost} before any other call into the
   * instance.
   */
  boolean defers(String export, long[] args) {
    if (pendingPost != null
        || args.length != 1
        || !export.startsWith(POST_PREFIX)
        || !POST_TYPE.equals(signatures.apply(export))) {
      return false;
    }
    ByteBuffer scratch = scratch();
    scratch.putInt(WasmtimeHelpers.POST_ARG, (int) args[0]);
    scratch.putInt(WasmtimeHelpers.POST_PENDING, 1);
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
    ByteBuffer scratch = scratch();
    Map.Entry<String, Long> out =
        Map.entry(pendingPost, Integer.toUnsignedLong(scratch.getInt(WasmtimeHelpers.POST_ARG)));
    pendingPost = null;
    scratch.putInt(WasmtimeHelpers.POST_PENDING, 0);
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
    String post = pendingPost == null ? "" : pendingPost;
    WasmtimeHelpers.Helper helper = byPost.get(post);
    if (helper == null) {
      helper = instantiate(post);
    }
    int count = lengths.length;
    ByteBuffer out = helpers.scratchForLengths(count, this::reallocFailed);
    out.putInt(WasmtimeHelpers.COUNT, count);
    for (int i = 0; i < count; i++) {
      out.putInt(WasmtimeHelpers.LENGTHS + i * 4, lengths[i]);
    }
    try {
      return helpers.call(helper);
    } finally {
      pendingPost = null;
    }
  }

  /**
   * Whether {@link #lowerAndCall} takes a call of {@code export} whose strings have {@code bytes}
   * bytes in all: an export of core type {@code (i32, i32) -> i32}, at most {@link #MAX_STAGED}
   * bytes (a larger batch takes the two calls: its bytes are copied straight into the guest).
   */
  boolean takes(String export, long bytes) {
    if (bytes > MAX_STAGED) {
      return false;
    }
    // asked twice a parse: the answer by export, not its signature compared each time
    Boolean known = fusable.get(export);
    if (known == null) {
      known = hasFusableType(export);
      fusable.put(export, known);
    }
    return known;
  }

  private boolean hasFusableType(String export) {
    try {
      return WasmtimeCallPairs.TYPE.equals(signatures.apply(export));
    } catch (RuntimeException e) {
      return false; // not a function export: the ordinary path says so
    }
  }

  /**
   * In one guest call: the pending post-return if there is one, the allocations {@link #allocate}
   * makes, each string's bytes copied in from the scratch, then {@code export(list, count)}.
   *
   * @return the export's result, zero-extended, when it was called; else {@code null}, and {@code
   *     packed[0]} holds {@link #allocate}'s packed report of the first bad pointer
   */
  Long lowerAndCall(String export, byte[][] strings, long[] packed) {
    String post = pendingPost == null ? "" : pendingPost;
    Map<String, WasmtimeHelpers.Helper> byExport = byPostAndExport.get(post);
    WasmtimeHelpers.Helper helper = byExport == null ? null : byExport.get(export);
    if (helper == null) {
      helper = instantiateLowerCall(post, export);
    }
    int count = strings.length;
    long bytes = 0;
    for (byte[] s : strings) {
      bytes += s.length;
    }
    int at = WasmtimeHelpers.bytesAt(count);
    ByteBuffer out = helpers.scratchFor(at + bytes, this::reallocFailed);
    out.putInt(WasmtimeHelpers.COUNT, count);
    out.putInt(WasmtimeHelpers.BYTES_AT, at);
    out.putInt(WasmtimeHelpers.CALLING, 0);
    for (int i = 0; i < count; i++) {
      out.putInt(WasmtimeHelpers.LENGTHS + i * 4, strings[i].length);
      out.put(at, strings[i]);
      at += strings[i].length;
    }
    long result;
    try {
      result = helpers.call(helper);
    } finally {
      pendingPost = null;
    }
    if (scratch().getInt(WasmtimeHelpers.CALLING) != 0) {
      return result;
    }
    packed[0] = result;
    return null;
  }

  /** A fused helper whose imports are the driver's allocator, {@code post} and {@code export}. */
  private WasmtimeHelpers.Helper instantiateLowerCall(String post, String export) {
    scratch(); // before no_post is looked up in it
    List<Func> funcs = new java.util.ArrayList<>();
    try {
      funcs.add(lookup.apply(REALLOC));
      funcs.add(post.isEmpty() ? helpers.scratchFunc("no_post") : lookup.apply(post));
      funcs.add(lookup.apply(export));
    } catch (RuntimeException e) {
      funcs.forEach(Func::dispose);
      throw reallocFailed(e);
    }
    WasmtimeHelpers.Helper helper =
        helpers.instantiate(
            LOWER_CALL_RESOURCE,
            LOWER_CALL_EXPORT,
            funcs,
            LOWER_CALL_IMPORTS,
            // Whichever of the three was running when it failed: the post-return while its flag
            // is still set, the export once the helper called it, else the allocator.
            e ->
                classify.apply(
                    !post.isEmpty() && scratch().getInt(WasmtimeHelpers.POST_PENDING) != 0
                        ? post
                        : scratch().getInt(WasmtimeHelpers.CALLING) != 0 ? export : REALLOC,
                    e),
            this::reallocFailed);
    byPostAndExport.computeIfAbsent(post, p -> new HashMap<>()).put(export, helper);
    return helper;
  }

  private ByteBuffer scratch() {
    return helpers.scratch(this::reallocFailed);
  }

  private RuntimeException reallocFailed(RuntimeException e) {
    return classify.apply(REALLOC, e);
  }

  /** A helper instance whose {@code post} import is the driver's {@code post} export. */
  private WasmtimeHelpers.Helper instantiate(String post) {
    scratch(); // before no_post is looked up in it
    Func realloc = null;
    Func postFunc = null;
    try {
      realloc = lookup.apply(REALLOC);
      postFunc = post.isEmpty() ? helpers.scratchFunc("no_post") : lookup.apply(post);
    } catch (RuntimeException e) {
      if (realloc != null) {
        realloc.dispose();
      }
      throw reallocFailed(e);
    }
    WasmtimeHelpers.Helper helper =
        helpers.instantiate(
            RESOURCE,
            EXPORT,
            List.of(realloc, postFunc),
            SCRATCH_IMPORTS,
            // Still flagged: the post-return did not return, so it is what failed.
            e ->
                classify.apply(
                    !post.isEmpty() && scratch().getInt(WasmtimeHelpers.POST_PENDING) != 0
                        ? post
                        : REALLOC,
                    e),
            this::reallocFailed);
    byPost.put(post, helper);
    return helper;
  }
}
