package io.capsule.driver.engine;

import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.wasm.WasmInstance;
import io.capsule.driver.wasm.WasmModule;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Module;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A component's core graph compiled for wasmtime: one {@link Module} per module instantiation, its
 * imports renamed ({@link ImportRenamer}) to the unique names their providers are registered under
 * in the run's linker — {@code core-instance-N} for another instance's export, {@code wasi-host}
 * for a lowered WASI function or resource drop. Shared by every run; thread-safe.
 */
final class WasmtimeGraph implements WasmModule {

  static final String HOST = "wasi-host";

  /**
   * What a module's {@code _initialize} export is renamed to, so wasmtime's linker does not call it
   * on registration (before the fixup has filled the table it calls WASI through); the fixup's
   * start function, which imports it, calls it at the component's own time.
   */
  static final String DEFERRED_INITIALIZE = "capsule:deferred-initialize";

  /** A host function an instantiation imports, under its renamed name. */
  record HostImport(ImportRenamer.Name name, CoreGraph.Item item, CoreModule.FuncType type) {}

  /**
   * One module instantiation: the graph's instance index, its compiled module, its host imports.
   */
  record Step(int instance, Module module, List<HostImport> hostImports) {}

  private final Engine engine;
  private final GraphLinking linking;
  private final List<Step> steps;
  private final String sha256;
  private final EpochTicker ticker;

  private WasmtimeGraph(
      Engine engine, GraphLinking linking, List<Step> steps, String sha256, EpochTicker ticker) {
    this.engine = engine;
    this.linking = linking;
    this.steps = List.copyOf(steps);
    this.sha256 = sha256;
    this.ticker = ticker;
  }

  static String instanceName(int instance) {
    return "core-instance-" + instance;
  }

  /**
   * Compiles every instantiation of {@code graph}; {@code track} receives each module so the engine
   * frees it on close.
   */
  static WasmtimeGraph compile(
      Engine engine,
      CoreGraph graph,
      long memoryCapBytes,
      Consumer<Module> track,
      EpochTicker ticker) {
    GraphLinking linking = GraphLinking.prepare(graph, memoryCapBytes);
    List<Step> steps = new ArrayList<>();
    for (int i = 0; i < graph.instances().size(); i++) {
      if (!(graph.instances().get(i) instanceof CoreGraph.Instantiate step)) {
        continue;
      }
      GraphLinking.Prepared prepared = linking.modules().get(step.module());
      List<ImportRenamer.Name> names = new ArrayList<>();
      List<HostImport> hostImports = new ArrayList<>();
      int funcImport = 0;
      int k = 0;
      for (CoreModule.Import imp : prepared.info().imports()) {
        CoreModule.FuncType type =
            imp.kind().equals("func") ? prepared.info().importFuncTypes().get(funcImport++) : null;
        int from = GraphLinking.argument(step, i, imp.module(), imp.name());
        GraphLinking.Resolved r = linking.resolve(from, imp.name());
        if (r instanceof GraphLinking.ModuleExport e) {
          String name = e.name().equals(PreparedModule.INITIALIZE) ? DEFERRED_INITIALIZE : e.name();
          names.add(new ImportRenamer.Name(instanceName(e.instance()), name));
        } else {
          if (type == null) {
            throw Failures.unloadable(
                "the driver imports "
                    + imp.qualified()
                    + " as a "
                    + imp.kind()
                    + ", not a function");
          }
          ImportRenamer.Name name = new ImportRenamer.Name(HOST, i + "." + k);
          names.add(name);
          hostImports.add(new HostImport(name, ((GraphLinking.Host) r).item(), type));
        }
        k++;
      }
      byte[] renamed;
      try {
        renamed =
            ImportRenamer.renameExport(
                ImportRenamer.rename(prepared.bytes(), names),
                PreparedModule.INITIALIZE,
                DEFERRED_INITIALIZE);
      } catch (ByteReader.Malformed e) {
        throw Failures.unloadable("a core module of the driver does not parse: " + e.getMessage());
      }
      Module module;
      try {
        module = new Module(engine, renamed);
      } catch (RuntimeException e) {
        throw Failures.unloadable("wasmtime cannot compile the driver: " + e.getMessage(), e);
      }
      track.accept(module);
      steps.add(new Step(i, module, hostImports));
    }
    return new WasmtimeGraph(
        engine, linking, steps, Sha256.hex(graph.modules().get(graph.mainModule())), ticker);
  }

  GraphLinking linking() {
    return linking;
  }

  List<Step> steps() {
    return steps;
  }

  @Override
  public String sha256() {
    return sha256;
  }

  @Override
  public Set<String> functionExports() {
    return linking.mainInfo().functionExports().keySet();
  }

  @Override
  public WasmInstance instantiate(Duration callDeadline) {
    ticker.ensureStarted();
    return WasmtimeGraphInstance.create(engine, this, callDeadline, ticker);
  }
}
