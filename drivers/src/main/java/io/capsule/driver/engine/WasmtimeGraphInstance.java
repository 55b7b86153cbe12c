package io.capsule.driver.engine;

import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.wasi.WasiHost;
import io.capsule.driver.wasi.WasiTrap;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmInstance;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Extern;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Linker;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Val;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One run of a WASI driver on wasmtime: every core instance of the component's graph in one store
 * and one {@link Linker}, instantiated in the component's order. Each module was compiled with its
 * imports renamed to where they come from ({@link WasmtimeGraph}): another instance's export
 * ({@code core-instance-N}) or a host function ({@code wasi-host}), which this instance defines
 * over a fresh {@link WasiHost} before the module that imports it.
 *
 * <p>A host function that traps records why; the engine's trap is reported with that reason. Not
 * thread-safe: one thread at a time, like every instance.
 */
final class WasmtimeGraphInstance implements WasmInstance {

  private final Store<Void> store;
  private final Linker linker;
  private final WasmtimeGraph graph;
  private final Duration deadline;
  private final StoreDeadline armed;
  private final WasiHost host = new WasiHost();
  private final List<Func> ownedFuncs = new ArrayList<>();
  private final Map<String, Func> funcs = new HashMap<>();
  private WasmtimeExports exports;
  private Memory memory;
  private WasmtimeBufferMemory guestMemory;
  private RuntimeException pendingTrap;
  private boolean closed;

  private WasmtimeGraphInstance(
      Engine engine, WasmtimeGraph graph, Duration deadline, EpochTicker ticker) {
    this.store = new Store<>(null, engine);
    this.linker = new Linker(engine);
    this.graph = graph;
    this.deadline = deadline;
    this.armed =
        new StoreDeadline(EpochTicker.ticks(deadline), ticker::ticks, store::setEpochDeadline);
  }

  static WasmtimeGraphInstance create(
      Engine engine, WasmtimeGraph graph, Duration deadline, EpochTicker ticker) {
    WasmtimeGraphInstance created = new WasmtimeGraphInstance(engine, graph, deadline, ticker);
    try {
      created.store.setEpochDeadline(EpochTicker.ticks(deadline));
      created.instantiateAll();
    } catch (RuntimeException e) {
      RuntimeException reported = created.classify("instantiation", e);
      created.close();
      throw reported;
    }
    return created;
  }

  private void instantiateAll() {
    int main = graph.linking().graph().mainInstance();
    for (WasmtimeGraph.Step step : graph.steps()) {
      for (WasmtimeGraph.HostImport h : step.hostImports()) {
        linker.define(store, h.name().module(), h.name().name(), hostFunc(h));
      }
      linker.module(store, WasmtimeGraph.instanceName(step.instance()), step.module());
      if (step.instance() == main) {
        memory = export(main, "memory").memory();
        guestMemory =
            new WasmtimeBufferMemory(
                this,
                () -> memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN),
                () -> memory.dataSize(store));
      }
    }
  }

  private Extern export(int instance, String name) {
    return linker
        .get(store, WasmtimeGraph.instanceName(instance), name)
        .orElseThrow(() -> GraphLinking.missing(instance, name));
  }

  private Extern hostFunc(WasmtimeGraph.HostImport h) {
    WasiHost.HostFunction fn;
    WasiHost.Guest guest = null;
    if (h.item() instanceof CoreGraph.Lowered l) {
      fn = host.function(l.iface(), l.function());
      guest = guest(l);
    } else {
      CoreGraph.Dropped d = (CoreGraph.Dropped) h.item();
      fn = host.drop(d.iface(), d.resource());
    }
    WasiHost.Guest g = guest;
    CoreModule.FuncType type = h.type();
    io.github.kawamuray.wasmtime.FuncType ft =
        new io.github.kawamuray.wasmtime.FuncType(
            type.params().stream().map(WasmtimeExports::valType).toArray(Val.Type[]::new),
            type.results().stream().map(WasmtimeExports::valType).toArray(Val.Type[]::new));
    Func func =
        new Func(
            store,
            ft,
            (caller, params, results) -> {
              long[] args = new long[params.length];
              for (int p = 0; p < params.length; p++) {
                args[p] = WasmtimeExports.raw(params[p]);
              }
              try {
                long[] out = fn.call(g, args);
                for (int r = 0; r < results.length; r++) {
                  results[r] = WasmtimeExports.toVal(type.results().get(r), out[r]);
                }
              } catch (RuntimeException e) {
                pendingTrap = e;
                throw e;
              } finally {
                if (guestMemory != null) {
                  guestMemory.invalidate();
                }
              }
            });
    ownedFuncs.add(func);
    return Extern.fromFunc(func);
  }

  private WasiHost.Guest guest(CoreGraph.Lowered lowered) {
    int main = graph.linking().graph().mainInstance();
    return new WasiHost.Guest() {
      @Override
      public GuestMemory memory() {
        CoreGraph.Export m =
            lowered.memory().orElseThrow(() -> new WasiTrap("the lowering names no memory"));
        GraphLinking.Resolved r = graph.linking().resolve(m.instance(), m.name());
        if (!(r instanceof GraphLinking.ModuleExport e) || e.instance() != main) {
          throw new WasiTrap("the lowering names a memory other than the driver's");
        }
        return guestMemory;
      }

      @Override
      public int realloc(int oldPtr, int oldSize, int align, int newSize) {
        CoreGraph.Export r =
            lowered.realloc().orElseThrow(() -> new WasiTrap("the lowering names no realloc"));
        Func f =
            funcs.computeIfAbsent("realloc:" + r.instance() + ":" + r.name(), k -> reallocFunc(r));
        guestMemory.invalidate();
        Val[] out =
            f.call(
                store,
                Val.fromI32(oldPtr),
                Val.fromI32(oldSize),
                Val.fromI32(align),
                Val.fromI32(newSize));
        guestMemory.invalidate();
        int ptr = out[0].i32();
        guestMemory.check(ptr, Integer.toUnsignedLong(newSize));
        return ptr;
      }
    };
  }

  private Func reallocFunc(CoreGraph.Export r) {
    if (graph.linking().resolve(r.instance(), r.name()) instanceof GraphLinking.ModuleExport e) {
      return export(e.instance(), e.name()).func();
    }
    throw new WasiTrap("the lowering's realloc is not a module's function");
  }

  @Override
  public boolean hasExport(String name) {
    return graph.linking().mainInfo().functionExports().containsKey(name);
  }

  @Override
  public long[] call(String export, long... args) {
    if (closed) {
      throw new IllegalStateException("the instance is closed");
    }
    pendingTrap = null;
    return exports().call(export, args);
  }

  /** Bound once the main instance (its memory) exists. */
  private WasmtimeExports exports() {
    if (exports == null) {
      int main = graph.linking().graph().mainInstance();
      exports =
          new WasmtimeExports(
              store,
              armed,
              guestMemory,
              export -> {
                CoreModule.FuncType type = graph.linking().mainInfo().functionExports().get(export);
                if (type == null) {
                  throw Failures.noSuchExport(export);
                }
                return type;
              },
              export -> export(main, export).func(),
              this::classify);
    }
    return exports;
  }

  /** A host function's own reason wins over wasmtime's generic trap text. */
  private RuntimeException classify(String export, RuntimeException e) {
    RuntimeException hostFailure = pendingTrap;
    pendingTrap = null;
    if (hostFailure instanceof DriverException d) {
      return d;
    }
    if (hostFailure != null) {
      return Failures.trap(export, String.valueOf(hostFailure.getMessage()), e);
    }
    if (e instanceof DriverException d) {
      return d;
    }
    String text = String.valueOf(e.getMessage());
    String lower = text.toLowerCase(java.util.Locale.ROOT);
    if (lower.contains("interrupt") || lower.contains("epoch")) {
      return Failures.deadline(export, deadline, e);
    }
    return Failures.trap(export, WasmtimeInstance.firstLine(text), e);
  }

  @Override
  public GuestMemory memory() {
    return guestMemory;
  }

  @Override
  public List<String> drainOutput() {
    return host.drainOutput();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (exports != null) {
      exports.dispose();
    }
    funcs.values().forEach(Func::dispose);
    funcs.clear();
    ownedFuncs.forEach(Func::dispose);
    ownedFuncs.clear();
    if (memory != null) {
      memory.dispose();
    }
    linker.dispose();
    store.dispose();
  }
}
