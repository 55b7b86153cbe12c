package io.capsule.driver.engine;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.wasm.DriverException;
import java.util.ArrayList;
import java.util.List;

/**
 * The engine-independent half of running a {@link CoreGraph}: each module parsed and (the ones that
 * define a memory) capped, once per artifact. Engines walk {@link CoreGraph#instances()} in order
 * and resolve each import through {@link #argument}.
 *
 * @param graph the component's graph
 * @param modules per graph module: what it declares and the bytes to compile
 */
record GraphLinking(CoreGraph graph, List<Prepared> modules) {

  /** One module: its parsed facts and the bytes an engine compiles (memory capped when defined). */
  record Prepared(CoreModule info, byte[] bytes) {}

  static GraphLinking prepare(CoreGraph graph, long memoryCapBytes) {
    List<Prepared> modules = new ArrayList<>();
    for (byte[] bytes : graph.modules()) {
      CoreModule info;
      try {
        info = CoreModule.parse(bytes);
      } catch (ByteReader.Malformed e) {
        throw Failures.unloadable("a core module of the driver does not parse: " + e.getMessage());
      }
      if (info.functionExports().containsKey("_start")) {
        // wasmtime's linker would instantiate a command afresh for every call, losing the run's
        // state; a driver is a library (reactor), so refuse it on both engines alike
        throw Failures.unloadable(
            "a core module of the driver exports _start (a command); build the driver as a reactor"
                + " library and adapt it with the preview1 reactor adapter");
      }
      if (info.definesMemory()) {
        info.memoryProblem(memoryCapBytes)
            .ifPresent(
                why -> {
                  throw Failures.unloadable("the driver's memory cannot be capped: " + why);
                });
        modules.add(new Prepared(info, info.withMemoryCap(memoryCapBytes)));
      } else {
        modules.add(new Prepared(info, bytes));
      }
    }
    return new GraphLinking(graph, modules);
  }

  /** The main module's facts (its exports are the driver's). */
  CoreModule mainInfo() {
    return modules.get(graph.mainModule()).info();
  }

  /** The core instance an {@code instantiate} passes for import module {@code module}. */
  static int argument(CoreGraph.Instantiate step, int stepIndex, String module, String name) {
    Integer instance = step.args().get(module);
    if (instance == null) {
      throw new DriverException(
          Diagnostic.of(
              Code.E_RUN_032,
              "core instance "
                  + stepIndex
                  + " imports "
                  + module
                  + "."
                  + name
                  + ", which its instantiation does not provide"));
    }
    return instance;
  }

  /** What an import resolves to: an export of a module instance, or a host item. */
  sealed interface Resolved permits ModuleExport, Host {}

  /** Export {@code name} of the module instance at {@code instance}. */
  record ModuleExport(int instance, String name) implements Resolved {}

  /** A lowered WASI function or a resource drop, served by the host. */
  record Host(CoreGraph.Item item) implements Resolved {}

  /** Follows bundles from export {@code name} of core instance {@code instance} to its provider. */
  Resolved resolve(int instance, String name) {
    CoreGraph.Instance at = graph.instances().get(instance);
    if (at instanceof CoreGraph.Instantiate) {
      return new ModuleExport(instance, name);
    }
    CoreGraph.Item item = ((CoreGraph.Bundle) at).exports().get(name);
    if (item == null) {
      throw missing(instance, name);
    }
    if (item instanceof CoreGraph.Export e) {
      return resolve(e.instance(), e.name());
    }
    return new Host(item);
  }

  static DriverException missing(int instance, String name) {
    return new DriverException(
        Diagnostic.of(
            Code.E_RUN_032,
            "core instance " + instance + " has no export '" + name + "' the graph refers to"));
  }
}
