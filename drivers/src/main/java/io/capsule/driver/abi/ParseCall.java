package io.capsule.driver.abi;

import io.capsule.driver.api.Event;
import io.capsule.driver.wasm.WasmInstance;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * Calls {@code parse(lines) -> list<event>} as {@link GuestCall#invoke} does, with the result
 * lifted by {@link EventLifter} straight into events; when that lifter gives up, the generic lifter
 * decides (so every refusal is worded, coded and pathed exactly as before). The same arguments
 * reach the guest, the same export is called, the same post-return follows.
 *
 * <p>One per driver instance (the lifter keeps a scratch buffer). Not thread-safe: confined with
 * its instance.
 */
public final class ParseCall {
  private static final WitFunction PARSE = ContractTypes.PARSE;
  private static final String EXPORT = ContractTypes.coreExport(PARSE);

  private final EventLifter lifter = new EventLifter();

  /**
   * On an instance that lowers a {@code list<string>} in the same guest call as the export ({@link
   * WasmInstance#callsWithStrings}), the lines' UTF-8 go there; else the generic lowering, then the
   * call.
   */
  private static long[] lowerAndCall(
      WasmInstance instance, CanonicalAbi abi, List<String> lines, List<Object> args) {
    int count = lines.size();
    // asked first with no bytes, so that an engine without it (Chicory) encodes the lines once
    if (count < 1 << 27 && instance.callsWithStrings(EXPORT, 0)) {
      byte[][] utf8 = new byte[count][];
      long bytes = 0;
      for (int i = 0; i < count; i++) {
        utf8[i] = lines.get(i).getBytes(StandardCharsets.UTF_8);
        bytes += utf8[i].length;
      }
      if (instance.callsWithStrings(EXPORT, bytes)) {
        return instance.callWithStrings(EXPORT, utf8);
      }
      // Too many bytes for one crossing: lowered generically, from these bytes (issue #15: every
      // line of a large batch was encoded twice, here and again by the generic lowering).
      Optional<long[]> flat = abi.lowerEncodedStrings(PARSE.params(), utf8);
      if (flat.isPresent()) {
        return instance.call(EXPORT, flat.get());
      }
    }
    return instance.call(EXPORT, abi.lowerParams(PARSE.params(), args));
  }

  /** {@code parse} of these lines on {@code instance}; failures as {@link GuestCall#invoke}'s. */
  public List<Event> parse(WasmInstance instance, List<String> lines) {
    List<Object> args = List.of(lines);
    return GuestCall.call(
        instance,
        EXPORT,
        PARSE.name(),
        abi -> lowerAndCall(instance, abi, lines, args),
        (abi, flat) -> {
          if (flat.length == 1) {
            List<Event> events = lifter.events(abi.memory(), (int) flat[0]);
            if (events != null) {
              return events;
            }
          }
          return ContractCodec.events(abi.liftResults(PARSE.results(), flat).get(0));
        });
  }
}
