package io.capsule.driver.engine;

import io.github.kawamuray.wasmtime.Func;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A call of a driver export whose core type is {@code (i32, i32) -> i32} made through a small
 * helper module ({@code src/main/wat/call-pair.wat}) instantiated in the driver's store, one per
 * such export, which imports the export. Why: through wasmtime-java a call marshals each parameter
 * and result as a {@code Val} through JNI, and that, not the call, is most of a crossing's cost;
 * the helper's {@code call_pair} takes and returns nothing, its two arguments written by the host
 * into the scratch memory of {@link WasmtimeHelpers} and the export's result, with the memory's
 * size, left there by the helper. That is the type of {@code parse(lines) -> list<event>} (a list's
 * pointer and length in, a return area's pointer out), called once per batch of lines.
 *
 * <p>What the guest sees is unchanged: the export is called once, with the same arguments, by the
 * helper instead of the host, and nothing else of the driver's is called. What the host sees is
 * unchanged: the same result bits (an i32 zero-extended, as {@link WasmtimeExports} hands one
 * back), which the caller checks as it checks any pointer the guest returns. The call is bounded as
 * every call is (the store's epoch deadline is armed before the helper runs), and a trap or
 * deadline is the export's (the helper itself only reads and writes the scratch, in bounds). Not
 * thread-safe: confined with its instance.
 */
final class WasmtimeCallPairs {

  /** The helper module's bytes, built from {@code src/main/wat/call-pair.wat}. */
  static final String RESOURCE = "call-pair.wasm";

  /** The core type a call pair calls. */
  static final CoreModule.FuncType TYPE =
      new CoreModule.FuncType(
          List.of(CoreModule.ValType.I32, CoreModule.ValType.I32), List.of(CoreModule.ValType.I32));

  private static final String EXPORT = "call_pair";

  /** The scratch's exports the helper imports, in its import order. */
  private static final List<String> SCRATCH_IMPORTS = List.of("arg", "report");

  private final WasmtimeHelpers helpers;
  private final Function<String, CoreModule.FuncType> signatures;
  private final Function<String, Func> lookup;
  private final BiFunction<String, RuntimeException, RuntimeException> classify;
  private final Map<String, WasmtimeHelpers.Helper> byExport = new HashMap<>();

  /**
   * @param helpers the store's helpers, whose scratch this object shares
   * @param signatures a driver export's core signature
   * @param lookup a driver export's {@link Func}, a new handle the caller owns
   * @param classify what a failed call becomes, given the guest function and wasmtime's error
   */
  WasmtimeCallPairs(
      WasmtimeHelpers helpers,
      Function<String, CoreModule.FuncType> signatures,
      Function<String, Func> lookup,
      BiFunction<String, RuntimeException, RuntimeException> classify) {
    this.helpers = helpers;
    this.signatures = signatures;
    this.lookup = lookup;
    this.classify = classify;
  }

  /** Whether {@link #call} takes this call: an export of {@link #TYPE}, given two arguments. */
  boolean takes(String export, long[] args) {
    if (args.length != 2) {
      return false;
    }
    if (byExport.containsKey(export)) {
      return true;
    }
    try {
      return TYPE.equals(signatures.apply(export));
    } catch (RuntimeException e) {
      return false; // not a function export: the ordinary path says so
    }
  }

  /** Calls {@code export} with its two arguments through its helper; returns its one result. */
  long[] call(String export, long[] args) {
    WasmtimeHelpers.Helper helper = byExport.get(export);
    Function<RuntimeException, RuntimeException> failed = e -> classify.apply(export, e);
    if (helper == null) {
      helpers.scratch(failed);
      Func func;
      try {
        func = lookup.apply(export);
      } catch (RuntimeException e) {
        throw failed.apply(e);
      }
      helper =
          helpers.instantiate(RESOURCE, EXPORT, List.of(func), SCRATCH_IMPORTS, failed, failed);
      byExport.put(export, helper);
    }
    ByteBuffer scratch = helpers.scratch(failed);
    scratch.putInt(WasmtimeHelpers.ARGS, (int) args[0]);
    scratch.putInt(WasmtimeHelpers.ARGS + 4, (int) args[1]);
    return new long[] {helpers.call(helper)};
  }
}
