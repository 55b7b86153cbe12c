package io.capsule.driver.abi;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.DriverTrap;
import io.capsule.driver.wasm.WasmInstance;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * One call of a lifted component function on a core instance (CanonicalABI.md {@code canon_lift},
 * seen from the host): lower the arguments, call the core export, lift the result, then call {@code
 * cabi_post_<export>} when the guest exports it, so it can free what it returned.
 *
 * <p>Every failure is a {@link DriverException} with {@code E-RUN-034} whose message starts {@code
 * driver failed in <function>:} and whose details name the function: a trap or deadline from the
 * engine stays a {@link DriverTrap}, a result that does not lift an {@link AbiViolation}. After a
 * failure the instance is not called again (post-return is skipped): the caller ends the run.
 */
public final class GuestCall {
  private GuestCall() {}

  /**
   * Post-return names by core export, made once: a {@code parse} batch asked for its name each
   * time, a new string hashed again by every lookup of it. Holds one entry per export of the
   * contract the host calls (the names come from the host, never from a driver).
   */
  private static final Map<String, String> POST_RETURN_NAMES = new ConcurrentHashMap<>();

  /** The name of the post-return export for a core export. */
  public static String postReturnName(String coreExport) {
    return POST_RETURN_NAMES.computeIfAbsent(coreExport, e -> "cabi_post_" + e);
  }

  /**
   * Calls {@code coreExport} as {@code function} with {@code args} (one Java value per parameter,
   * see {@link WitType}); returns the lifted result, empty for a function without one.
   */
  public static Optional<Object> invoke(
      WasmInstance instance, String coreExport, WitFunction function, List<Object> args) {
    return call(
        instance,
        coreExport,
        function.name(),
        abi -> instance.call(coreExport, abi.lowerParams(function.params(), args)),
        (abi, flatResults) -> {
          List<Object> results = abi.liftResults(function.results(), flatResults);
          return results.isEmpty() ? Optional.empty() : Optional.of(results.get(0));
        });
  }

  /**
   * One call as {@link #invoke} makes it, with the lowering and the lifting given: {@code
   * lowerAndCall} lowers the arguments and calls the export, returning its flat results; {@code
   * lift} reads them (before the post-return runs). Every failure is wrapped as {@link #invoke}'s
   * are.
   */
  static <T> T call(
      WasmInstance instance,
      String coreExport,
      String name,
      Function<CanonicalAbi, long[]> lowerAndCall,
      BiFunction<CanonicalAbi, long[], T> lift) {
    try {
      CanonicalAbi abi = new CanonicalAbi(instance.memory());
      long[] flatResults = lowerAndCall.apply(abi);
      T results = lift.apply(abi, flatResults);
      String post = postReturnName(coreExport);
      if (instance.hasExport(post)) {
        instance.call(post, flatResults);
      }
      return results;
    } catch (AbiViolation e) {
      throw new AbiViolation(in(name, e.diagnostic()), e);
    } catch (DriverTrap e) {
      throw new DriverTrap(in(name, e.diagnostic()), e);
    } catch (DriverException e) {
      throw new DriverException(in(name, e.diagnostic()), e);
    } catch (IllegalArgumentException e) {
      throw e; // a host value that does not match its type: a host bug, not the driver's
    } catch (RuntimeException e) {
      // The engine is native code or a foreign library: whatever escapes it is the driver's call
      // failing, and must not take the runtime down.
      throw new DriverTrap(
          Diagnostic.of(Code.E_RUN_034, "driver failed in " + name + ": the engine failed: " + e)
              .with("function", name),
          e);
    }
  }

  private static Diagnostic in(String function, Diagnostic d) {
    String prefix = "driver failed in " + function + ": ";
    String message = d.message().startsWith(prefix) ? d.message() : prefix + d.message();
    String path = d.details().get(Violations.PATH);
    if (path != null && !message.contains(" (at result")) {
      message += " (at result" + path + ")";
    }
    Diagnostic out = new Diagnostic(Code.E_RUN_034, message, null, d.details());
    return d.details().containsKey("function") ? out : out.with("function", function);
  }
}
