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
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Val;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One run of a WASI driver on wasmtime: every core instance of the component's graph in one store,
 * wired in the component's order, with a fresh {@link WasiHost} behind the lowered imports. Each
 * module instance gets its own {@link Linker} (wasmtime-java 0.19 exposes tables and globals of an
 * instance only through a linker), holding exactly the imports its instantiation names.
 *
 * <p>A host function that traps records why, and the engine's trap is reported with that reason.
 * Not thread-safe: one thread at a time, like every instance.
 */
final class WasmtimeGraphInstance implements WasmInstance {

  private final Store<Void> store;
  private final GraphLinking linking;
  private final Duration deadline;
  private final long deadlineTicks;
  private final WasiHost host = new WasiHost();
  private final Linker[] linkers;
  private final List<Func> hostFuncs = new ArrayList<>();
  private final Map<String, Func> funcs = new HashMap<>();
  private final List<Linker> allLinkers = new ArrayList<>();
  private Memory memory;
  private GraphMemory guestMemory;
  private RuntimeException pendingTrap;
  private boolean closed;

  private WasmtimeGraphInstance(
      Engine engine, GraphLinking linking, Duration deadline, Module[] modules) {
    this.store = new Store<>(null, engine);
    this.linking = linking;
    this.deadline = deadline;
    this.deadlineTicks = EpochTicker.ticks(deadline);
    this.linkers = new Linker[linking.graph().instances().size()];
    this.engine = engine;
    this.modules = modules;
  }

  private final Engine engine;
  private final Module[] modules;

  static WasmtimeGraphInstance create(
      Engine engine, GraphLinking linking, Module[] modules, Duration deadline) {
    WasmtimeGraphInstance created = new WasmtimeGraphInstance(engine, linking, deadline, modules);
    try {
      created.store.setEpochDeadline(created.deadlineTicks);
      created.instantiateAll();
    } catch (RuntimeException e) {
      RuntimeException reported = created.classify("instantiation", e);
      created.close();
      throw reported;
    }
    return created;
  }

  private void instantiateAll() {
    List<CoreGraph.Instance> instances = linking.graph().instances();
    for (int i = 0; i < instances.size(); i++) {
      if (!(instances.get(i) instanceof CoreGraph.Instantiate step)) {
        continue;
      }
      Linker linker = new Linker(engine);
      allLinkers.add(linker);
      CoreModule info = linking.modules().get(step.module()).info();
      int funcImport = 0;
      for (CoreModule.Import imp : info.imports()) {
        CoreModule.FuncType type =
            imp.kind().equals("func") ? info.importFuncTypes().get(funcImport++) : null;
        int from = GraphLinking.argument(step, i, imp.module(), imp.name());
        linker.define(store, imp.module(), imp.name(), resolve(from, imp.name(), type));
      }
      linker.module(store, name(i), modules[step.module()]);
      linkers[i] = linker;
      if (i == linking.graph().mainInstance()) {
        memory = export(i, "memory").memory();
        guestMemory = new GraphMemory(this, memory);
      }
    }
  }

  private static String name(int instance) {
    return "core-instance-" + instance;
  }

  private Extern export(int instance, String name) {
    return linkers[instance]
        .get(store, name(instance), name)
        .orElseThrow(() -> GraphLinking.missing(instance, name));
  }

  private Extern resolve(int instance, String name, CoreModule.FuncType type) {
    if (linkers[instance] != null) {
      return export(instance, name);
    }
    CoreGraph.Bundle bundle = (CoreGraph.Bundle) linking.graph().instances().get(instance);
    CoreGraph.Item item = bundle.exports().get(name);
    if (item == null) {
      throw GraphLinking.missing(instance, name);
    }
    if (item instanceof CoreGraph.Export e) {
      return resolve(e.instance(), e.name(), type);
    }
    if (item instanceof CoreGraph.Lowered l) {
      return hostFunc(type, host.function(l.iface(), l.function()), guest(l));
    }
    CoreGraph.Dropped d = (CoreGraph.Dropped) item;
    return hostFunc(type, host.drop(d.iface(), d.resource()), null);
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
        return guestMemory;
      }

      @Override
      public int realloc(int oldPtr, int oldSize, int align, int newSize) {
        CoreGraph.Export r =
            lowered.realloc().orElseThrow(() -> new WasiTrap("the lowering names no realloc"));
        Func f = export(r.instance(), r.name()).func();
        hostFuncs.add(f);
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

  private Extern hostFunc(
      CoreModule.FuncType type, WasiHost.HostFunction fn, WasiHost.Guest guest) {
    if (type == null) {
      throw Failures.unloadable("a WASI function is imported as something other than a function");
    }
    io.github.kawamuray.wasmtime.FuncType ft =
        new io.github.kawamuray.wasmtime.FuncType(
            type.params().stream().map(WasmtimeGraphInstance::valType).toArray(Val.Type[]::new),
            type.results().stream().map(WasmtimeGraphInstance::valType).toArray(Val.Type[]::new));
    Func func =
        new Func(
            store,
            ft,
            (caller, params, results) -> {
              long[] args = new long[params.length];
              for (int p = 0; p < params.length; p++) {
                args[p] = raw(params[p]);
              }
              try {
                long[] out = fn.call(guest, args);
                for (int r = 0; r < results.length; r++) {
                  results[r] = toVal(type.results().get(r), out[r]);
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
    hostFuncs.add(func);
    return Extern.fromFunc(func);
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
    Func func =
        funcs.computeIfAbsent(export, e -> export(linking.graph().mainInstance(), e).func());
    Val[] in = new Val[args.length];
    for (int i = 0; i < args.length; i++) {
      in[i] = toVal(type.params().get(i), args[i]);
    }
    Val[] out;
    pendingTrap = null;
    try {
      store.setEpochDeadline(deadlineTicks);
      out = func.call(store, in);
    } catch (RuntimeException e) {
      throw classify(export, e);
    } finally {
      guestMemory.invalidate();
    }
    long[] results = new long[type.results().size()];
    for (int i = 0; i < results.length; i++) {
      results[i] = raw(out[i]);
    }
    return results;
  }

  private RuntimeException classify(String export, RuntimeException e) {
    RuntimeException host = pendingTrap;
    pendingTrap = null;
    if (host instanceof DriverException d) {
      return d;
    }
    if (host != null) {
      return Failures.trap(export, String.valueOf(host.getMessage()), e);
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

  /** The WASI host behind this instance (tests read its handle table). */
  WasiHost host() {
    return host;
  }

  ByteBuffer buffer(Memory m) {
    return m.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    funcs.values().forEach(Func::dispose);
    funcs.clear();
    hostFuncs.forEach(Func::dispose);
    hostFuncs.clear();
    if (memory != null) {
      memory.dispose();
    }
    allLinkers.forEach(Linker::dispose);
    store.dispose();
  }

  private static Val.Type valType(CoreModule.ValType t) {
    return switch (t) {
      case I32 -> Val.Type.I32;
      case I64 -> Val.Type.I64;
      case F32 -> Val.Type.F32;
      case F64 -> Val.Type.F64;
      default -> throw Failures.unloadable("a WASI function takes or returns a " + t);
    };
  }

  private static Val toVal(CoreModule.ValType type, long raw) {
    return switch (type) {
      case I32 -> Val.fromI32((int) raw);
      case I64 -> Val.fromI64(raw);
      case F32 -> Val.fromF32(Float.intBitsToFloat((int) raw));
      case F64 -> Val.fromF64(Double.longBitsToDouble(raw));
      default -> throw new IllegalArgumentException("cannot pass a " + type + " value");
    };
  }

  private static long raw(Val v) {
    return switch (v.getType()) {
      case I32 -> Integer.toUnsignedLong(v.i32());
      case I64 -> v.i64();
      case F32 -> Integer.toUnsignedLong(Float.floatToRawIntBits(v.f32()));
      case F64 -> Double.doubleToRawLongBits(v.f64());
      default -> throw new IllegalStateException("cannot return a " + v.getType() + " value");
    };
  }

  /** The main instance's memory, re-fetched after anything that may grow it. */
  private static final class GraphMemory extends WasmtimeBufferMemory {
    GraphMemory(WasmtimeGraphInstance owner, Memory memory) {
      super(owner, () -> owner.buffer(memory));
    }
  }
}
