package io.capsule.driver.engine;

import com.dylibso.chicory.compiler.MachineFactoryCompiler;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.wasm.Parser;
import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.wasm.WasmEngine;
import io.capsule.driver.wasm.WasmInstance;
import io.capsule.driver.wasm.WasmModule;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The pure-Java engine: Chicory 1.7.5 in compiler mode. The built-in drivers' core modules were
 * translated to JVM classes when this jar was built ({@link ChicoryBuildTimeMachines}, found by the
 * module's SHA-256); any other module is translated at run time, once per compile (a few hundred ms
 * to over a second for a real driver, which is why compiled modules are cached by SHA-256). Calls
 * are bounded by thread interruption ({@link CallWatchdog}); memory by the rewritten declared
 * maximum, the same bytes wasmtime compiles, on both paths: the instance's memory comes from the
 * capped module, not from the machine classes.
 *
 * <p>Thread-safe: compiled modules are shared; each instance is confined to one thread at a time.
 */
public final class ChicoryEngine implements WasmEngine {

  public static final String NAME = "chicory";

  private final CallWatchdog watchdog = new CallWatchdog();
  private final AtomicInteger runtimeCompilations = new AtomicInteger();
  private final Function<String, Optional<Function<Instance, Machine>>> buildTimeMachines;

  /** An engine that uses the classes compiled into this jar for the built-in drivers. */
  public ChicoryEngine() {
    this(ChicoryBuildTimeMachines::forModule);
  }

  /**
   * An engine that compiles every module at run time, the built-ins too: the baseline the
   * build-time classes are measured against ({@code InstantiateBench}), never the runtime's engine.
   */
  public static ChicoryEngine runTimeCompiledOnly() {
    return new ChicoryEngine(sha -> Optional.empty());
  }

  /** An engine that finds build-time machines by module SHA-256 with {@code buildTimeMachines}. */
  ChicoryEngine(Function<String, Optional<Function<Instance, Machine>>> buildTimeMachines) {
    this.buildTimeMachines = buildTimeMachines;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public WasmModule compile(byte[] coreModule, long memoryCapBytes) {
    PreparedModule prepared = PreparedModule.prepare(coreModule, memoryCapBytes);
    com.dylibso.chicory.wasm.WasmModule module;
    Function<Instance, Machine> machines;
    try {
      module = Parser.parse(prepared.cappedBytes());
      machines =
          buildTimeMachines.apply(prepared.sha256()).orElseGet(() -> compileAtRunTime(module));
    } catch (RuntimeException e) {
      throw Failures.unloadable("chicory cannot compile the driver: " + e.getMessage(), e);
    }
    return new Compiled(prepared, module, machines);
  }

  @Override
  public WasmModule compileGraph(CoreGraph graph, long memoryCapBytes) {
    GraphLinking linking = GraphLinking.prepare(graph, memoryCapBytes);
    int n = linking.modules().size();
    com.dylibso.chicory.wasm.WasmModule[] parsed = new com.dylibso.chicory.wasm.WasmModule[n];
    List<Function<Instance, Machine>> machines = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        parsed[i] = Parser.parse(linking.modules().get(i).bytes());
        machines.add(compileAtRunTime(parsed[i]));
      }
    } catch (RuntimeException e) {
      throw Failures.unloadable("chicory cannot compile the driver: " + e.getMessage(), e);
    }
    String sha = Sha256.hex(graph.modules().get(graph.mainModule()));
    return new WasmModule() {
      @Override
      public String sha256() {
        return sha;
      }

      @Override
      public Set<String> functionExports() {
        return linking.mainInfo().functionExports().keySet();
      }

      @Override
      public WasmInstance instantiate(Duration callDeadline) {
        return ChicoryGraphInstance.create(linking, parsed, machines, watchdog, callDeadline);
      }
    };
  }

  private Function<Instance, Machine> compileAtRunTime(com.dylibso.chicory.wasm.WasmModule module) {
    runtimeCompilations.incrementAndGet();
    return MachineFactoryCompiler.compile(module);
  }

  /**
   * How many core modules this engine translated to bytecode at run time (a built-in driver's
   * module is not counted: its classes come from the jar).
   */
  public int runtimeCompilations() {
    return runtimeCompilations.get();
  }

  @Override
  public void close() {
    watchdog.close();
  }

  private final class Compiled implements WasmModule {
    private final PreparedModule prepared;
    private final com.dylibso.chicory.wasm.WasmModule module;
    private final Function<Instance, Machine> machines;

    Compiled(
        PreparedModule prepared,
        com.dylibso.chicory.wasm.WasmModule module,
        Function<Instance, Machine> machines) {
      this.prepared = prepared;
      this.module = module;
      this.machines = machines;
    }

    @Override
    public String sha256() {
      return prepared.sha256();
    }

    @Override
    public Set<String> functionExports() {
      return prepared.functionExports().keySet();
    }

    @Override
    public WasmInstance instantiate(Duration callDeadline) {
      return ChicoryInstance.create(module, machines, prepared, watchdog, callDeadline);
    }
  }
}
