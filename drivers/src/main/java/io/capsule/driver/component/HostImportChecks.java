package io.capsule.driver.component;

import io.capsule.config.diag.Code;
import io.capsule.driver.engine.CoreModule;
import io.capsule.driver.wasi.WasiFunctions;
import io.capsule.driver.wasi.WasiInterfaces;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Checks, at load, every core import a {@link CoreGraph} satisfies with a host item against the
 * WASI table ({@link WasiFunctions}): the lowered function exists in WASI 0.2, the importing module
 * declares it with the core type the canonical ABI flattens it to, and the lowering names the
 * {@code memory} and {@code realloc} the function needs; a resource drop is of a WASI resource and
 * typed {@code (i32) -> ()}. A component that fails one is malformed or needs what the host does
 * not give: {@code E-RUN-032} naming the import, never a trap at its first call. Pure.
 */
final class HostImportChecks {
  private HostImportChecks() {}

  /** {@code modules} are the graph's modules parsed, in module index order. */
  static void check(CoreGraph graph, List<CoreModule> modules) {
    for (CoreGraph.Instance instance : graph.instances()) {
      if (!(instance instanceof CoreGraph.Instantiate step)) {
        continue;
      }
      CoreModule info = modules.get(step.module());
      int funcImport = 0;
      for (CoreModule.Import imp : info.imports()) {
        CoreModule.FuncType type =
            imp.kind().equals("func") ? info.importFuncTypes().get(funcImport++) : null;
        Integer from = step.args().get(imp.module());
        CoreGraph.Item item = from == null ? null : hostItem(graph, from, imp.name());
        if (item == null) {
          continue; // a module's export, or missing: the engine's linking names that
        }
        if (type == null) {
          throw refuse(
              "imports "
                  + imp.qualified()
                  + " as a "
                  + imp.kind()
                  + ", but the component passes it a host function");
        }
        if (item instanceof CoreGraph.Lowered l) {
          checkLowered(l, type);
        } else {
          checkDrop((CoreGraph.Dropped) item, type);
        }
      }
    }
  }

  /** The host item behind export {@code name} of core instance {@code instance}, if it is one. */
  private static CoreGraph.Item hostItem(CoreGraph graph, int instance, String name) {
    CoreGraph.Instance at = graph.instances().get(instance);
    if (!(at instanceof CoreGraph.Bundle bundle)) {
      return null;
    }
    CoreGraph.Item item = bundle.exports().get(name);
    if (item instanceof CoreGraph.Export e) {
      return hostItem(graph, e.instance(), e.name());
    }
    return item;
  }

  private static void checkLowered(CoreGraph.Lowered l, CoreModule.FuncType type) {
    String what = l.iface() + "#" + l.function();
    String base = WasiInterfaces.served(l.iface()).orElseThrow();
    WasiFunctions.Signature sig =
        WasiFunctions.signature(base, l.function())
            .orElseThrow(
                () ->
                    ComponentBinary.refuse(
                        Code.E_RUN_032,
                        "the driver imports "
                            + what
                            + ", which WASI 0.2 does not define; this runtime serves only WASI"
                            + " 0.2's functions, with empty grants"));
    String params = types(type.params());
    String results = types(type.results());
    if (!params.equals(sig.params()) || !results.equals(sig.results())) {
      throw refuse(
          "lowers "
              + what
              + " as a core function ("
              + params
              + ") -> ("
              + results
              + "), but the canonical ABI flattens it to "
              + sig);
    }
    if (sig.memory() && l.memory().isEmpty()) {
      throw refuse("lowers " + what + " without the memory option it needs");
    }
    if (sig.realloc() && l.realloc().isEmpty()) {
      throw refuse("lowers " + what + " without the realloc option it needs");
    }
  }

  private static void checkDrop(CoreGraph.Dropped d, CoreModule.FuncType type) {
    String base = WasiInterfaces.served(d.iface()).orElseThrow();
    if (WasiFunctions.resourceType(base, d.resource()).isEmpty()) {
      throw ComponentBinary.refuse(
          Code.E_RUN_032,
          "the driver drops resource "
              + d.resource()
              + " of "
              + d.iface()
              + ", which WASI 0.2 does not define there");
    }
    if (!types(type.params()).equals("i32") || !type.results().isEmpty()) {
      throw refuse(
          "drops "
              + d.iface()
              + "#"
              + d.resource()
              + " through a core function ("
              + types(type.params())
              + ") -> ("
              + types(type.results())
              + "), not (i32) -> ()");
    }
  }

  private static String types(List<CoreModule.ValType> types) {
    return types.stream()
        .map(t -> t.name().toLowerCase(Locale.ROOT))
        .collect(Collectors.joining(" "));
  }

  private static RuntimeException refuse(String what) {
    return ComponentBinary.refuse(
        Code.E_RUN_032, "the driver component is not supported: its canon section " + what);
  }
}
