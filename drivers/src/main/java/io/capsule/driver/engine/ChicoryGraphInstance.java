package io.capsule.driver.engine;

import com.dylibso.chicory.runtime.ExportFunction;
import com.dylibso.chicory.runtime.HostFunction;
import com.dylibso.chicory.runtime.ImportFunction;
import com.dylibso.chicory.runtime.ImportGlobal;
import com.dylibso.chicory.runtime.ImportMemory;
import com.dylibso.chicory.runtime.ImportTable;
import com.dylibso.chicory.runtime.ImportValues;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.wasm.types.FunctionType;
import com.dylibso.chicory.wasm.types.ValType;
import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.wasi.WasiHost;
import io.capsule.driver.wasi.WasiTrap;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmInstance;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One run of a WASI driver on Chicory: every core instance of the component's graph, wired in the
 * component's order (functions, memories, tables and globals passed between instances as Chicory
 * imports), with a fresh {@link WasiHost} behind the lowered imports. The whole instantiation and
 * every call run under the engine's {@link CallWatchdog}.
 *
 * <p>Not thread-safe: one thread at a time, like every instance.
 */
final class ChicoryGraphInstance implements WasmInstance {

  private final GraphLinking linking;
  private final com.dylibso.chicory.wasm.WasmModule[] modules;
  private final List<Function<Instance, Machine>> machines;
  private final CallWatchdog watchdog;
  private final CallWatchdog.Slot slot;
  private final Duration deadline;
  private final WasiHost host = new WasiHost();
  private final Instance[] instances;
  private final Map<String, ExportFunction> funcs = new HashMap<>();
  private ChicoryMemory memory;
  private boolean closed;

  private ChicoryGraphInstance(
      GraphLinking linking,
      com.dylibso.chicory.wasm.WasmModule[] modules,
      List<Function<Instance, Machine>> machines,
      CallWatchdog watchdog,
      Duration deadline) {
    this.linking = linking;
    this.modules = modules;
    this.machines = machines;
    this.watchdog = watchdog;
    this.slot = watchdog.register();
    this.deadline = deadline;
    this.instances = new Instance[linking.graph().instances().size()];
  }

  static ChicoryGraphInstance create(
      GraphLinking linking,
      com.dylibso.chicory.wasm.WasmModule[] modules,
      List<Function<Instance, Machine>> machines,
      CallWatchdog watchdog,
      Duration deadline) {
    ChicoryGraphInstance created =
        new ChicoryGraphInstance(linking, modules, machines, watchdog, deadline);
    try {
      ChicoryInstance.guarded(
          "instantiation",
          created.slot,
          deadline,
          () -> {
            created.instantiateAll();
            return null;
          });
    } catch (RuntimeException e) {
      created.close();
      throw e;
    }
    return created;
  }

  private void instantiateAll() {
    List<CoreGraph.Instance> steps = linking.graph().instances();
    for (int i = 0; i < steps.size(); i++) {
      if (!(steps.get(i) instanceof CoreGraph.Instantiate step)) {
        continue;
      }
      CoreModule info = linking.modules().get(step.module()).info();
      ImportValues.Builder imports = ImportValues.builder();
      int funcImport = 0;
      for (CoreModule.Import imp : info.imports()) {
        int from = GraphLinking.argument(step, i, imp.module(), imp.name());
        switch (imp.kind()) {
          case "func" -> {
            CoreModule.FuncType type = info.importFuncTypes().get(funcImport++);
            imports.addFunction(function(from, imp, type));
          }
          case "memory" ->
              imports.addMemory(
                  new ImportMemory(imp.module(), imp.name(), owner(from, imp.name()).memory()));
          case "table" -> {
            Owner o = owner(from, imp.name());
            imports.addTable(
                new ImportTable(imp.module(), imp.name(), o.instance.exports().table(o.name)));
          }
          case "global" -> {
            Owner o = owner(from, imp.name());
            imports.addGlobal(
                new ImportGlobal(imp.module(), imp.name(), o.instance.exports().global(o.name)));
          }
          default ->
              throw Failures.unloadable(
                  "the driver imports a " + imp.kind() + " " + imp.qualified());
        }
      }
      instances[i] =
          Instance.builder(modules[step.module()])
              .withImportValues(imports.build())
              .withMachineFactory(machines.get(step.module()))
              .build();
      if (i == linking.graph().mainInstance()) {
        Instance main = instances[i];
        memory = new ChicoryMemory(this, main::memory);
        // A reactor's _initialize is not called here: the component's fixup module imports it and
        // its start function calls it once the indirect-call table the initializer reaches WASI
        // through is filled (calling it now traps on an uninitialized table element).
      }
    }
  }

  /** A module instance's export, following bundles that pass it on. */
  private record Owner(Instance instance, String name) {
    com.dylibso.chicory.runtime.Memory memory() {
      return instance.exports().memory(name);
    }
  }

  private Owner owner(int instance, String name) {
    if (instances[instance] != null) {
      return new Owner(instances[instance], name);
    }
    CoreGraph.Item item = bundleItem(instance, name);
    if (item instanceof CoreGraph.Export e) {
      return owner(e.instance(), e.name());
    }
    throw Failures.unloadable(
        "core instance " + instance + " passes '" + name + "' as a function, not a " + "memory");
  }

  private CoreGraph.Item bundleItem(int instance, String name) {
    CoreGraph.Bundle bundle = (CoreGraph.Bundle) linking.graph().instances().get(instance);
    CoreGraph.Item item = bundle.exports().get(name);
    if (item == null) {
      throw GraphLinking.missing(instance, name);
    }
    return item;
  }

  private ImportFunction function(int from, CoreModule.Import imp, CoreModule.FuncType type) {
    FunctionType ft =
        FunctionType.of(
            type.params().stream().map(ChicoryGraphInstance::valType).toList(),
            type.results().stream().map(ChicoryGraphInstance::valType).toList());
    if (instances[from] != null) {
      return reexport(imp, ft, instances[from], imp.name());
    }
    CoreGraph.Item item = bundleItem(from, imp.name());
    if (item instanceof CoreGraph.Export e) {
      Owner o = owner(e.instance(), e.name());
      return reexport(imp, ft, o.instance, o.name);
    }
    WasiHost.HostFunction fn;
    WasiHost.Guest guest = null;
    if (item instanceof CoreGraph.Lowered l) {
      fn = host.function(l.iface(), l.function());
      guest = guest(l);
    } else {
      CoreGraph.Dropped d = (CoreGraph.Dropped) item;
      fn = host.drop(d.iface(), d.resource());
    }
    WasiHost.Guest g = guest;
    return new HostFunction(imp.module(), imp.name(), ft, (inst, args) -> fn.call(g, args));
  }

  private static ImportFunction reexport(
      CoreModule.Import imp, FunctionType ft, Instance owner, String name) {
    ExportFunction target = owner.export(name);
    return new HostFunction(imp.module(), imp.name(), ft, (inst, args) -> target.apply(args));
  }

  private WasiHost.Guest guest(CoreGraph.Lowered lowered) {
    return new WasiHost.Guest() {
      @Override
      public GuestMemory memory() {
        CoreGraph.Export m =
            lowered.memory().orElseThrow(() -> new WasiTrap("the lowering names no memory"));
        if (m.instance() != linking.graph().mainInstance()) {
          throw new WasiTrap("the lowering names a memory other than the driver's");
        }
        return memory;
      }

      @Override
      public int realloc(int oldPtr, int oldSize, int align, int newSize) {
        CoreGraph.Export r =
            lowered.realloc().orElseThrow(() -> new WasiTrap("the lowering names no realloc"));
        Owner o = owner(r.instance(), r.name());
        int ptr = (int) o.instance.export(o.name).apply(oldPtr, oldSize, align, newSize)[0];
        memory.check(ptr, Integer.toUnsignedLong(newSize));
        return ptr;
      }
    };
  }

  private static ValType valType(CoreModule.ValType t) {
    return switch (t) {
      case I32 -> ValType.I32;
      case I64 -> ValType.I64;
      case F32 -> ValType.F32;
      case F64 -> ValType.F64;
      default -> throw Failures.unloadable("a WASI function takes or returns a " + t);
    };
  }

  @Override
  public boolean hasExport(String name) {
    return linking.mainInfo().functionExports().containsKey(name);
  }

  @Override
  public long[] call(String export, long... args) {
    if (closed) {
      throw new IllegalStateException("the instance is closed");
    }
    CoreModule.FuncType type = linking.mainInfo().functionExports().get(export);
    if (type == null) {
      throw Failures.noSuchExport(export);
    }
    if (args.length != type.params().size()) {
      throw new IllegalArgumentException(
          export + " takes " + type.params().size() + " values, not " + args.length);
    }
    ExportFunction func =
        funcs.computeIfAbsent(export, instances[linking.graph().mainInstance()]::export);
    long[] out = ChicoryInstance.guarded(export, slot, deadline, () -> func.apply(args));
    long[] results = new long[type.results().size()];
    for (int i = 0; i < results.length; i++) {
      results[i] =
          switch (type.results().get(i)) {
            case I32, F32 -> out[i] & 0xffff_ffffL;
            default -> out[i];
          };
    }
    return results;
  }

  @Override
  public GuestMemory memory() {
    return memory;
  }

  @Override
  public List<String> drainOutput() {
    return host.drainOutput();
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      funcs.clear();
      watchdog.unregister(slot);
    }
  }
}
