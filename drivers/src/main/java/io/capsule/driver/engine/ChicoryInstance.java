package io.capsule.driver.engine;

import com.dylibso.chicory.runtime.ChicoryInterruptedException;
import com.dylibso.chicory.runtime.ExportFunction;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.runtime.Memory;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmInstance;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One Chicory instance. Instantiation (data segments, a start function) and every call run under
 * the {@link CallWatchdog}; a stack overflow inside the guest surfaces as the JVM's {@link
 * StackOverflowError} and is a trap like any other.
 *
 * <p>Not thread-safe: one call at a time, from the thread that owns the instance.
 */
final class ChicoryInstance implements WasmInstance {

  private final Instance instance;
  private final PreparedModule prepared;
  private final CallWatchdog watchdog;
  private final CallWatchdog.Slot slot;
  private final Duration deadline;
  private final Map<String, ExportFunction> funcs = new HashMap<>();
  private final ChicoryMemory memory;
  private boolean closed;

  private ChicoryInstance(
      Instance instance,
      PreparedModule prepared,
      CallWatchdog watchdog,
      CallWatchdog.Slot slot,
      Duration deadline) {
    this.instance = instance;
    this.prepared = prepared;
    this.watchdog = watchdog;
    this.slot = slot;
    this.deadline = deadline;
    this.memory = prepared.info().exportsMemory("memory") ? new ChicoryMemory(this) : null;
  }

  static ChicoryInstance create(
      com.dylibso.chicory.wasm.WasmModule module,
      Function<Instance, Machine> machines,
      PreparedModule prepared,
      CallWatchdog watchdog,
      Duration deadline) {
    CallWatchdog.Slot slot = watchdog.register();
    Instance instance;
    try {
      instance =
          guarded(
              "instantiation",
              slot,
              deadline,
              () -> Instance.builder(module).withMachineFactory(machines).build());
    } catch (RuntimeException e) {
      watchdog.unregister(slot);
      throw e;
    }
    ChicoryInstance created = new ChicoryInstance(instance, prepared, watchdog, slot, deadline);
    try {
      prepared.initialize(created);
    } catch (RuntimeException e) {
      created.close();
      throw e;
    }
    return created;
  }

  @Override
  public boolean hasExport(String name) {
    return prepared.functionExports().containsKey(name);
  }

  @Override
  public long[] call(String export, long... args) {
    if (closed) {
      throw new IllegalStateException("the instance is closed");
    }
    CoreModule.FuncType type = prepared.signature(export);
    PreparedModule.checkArity(export, type, args);
    ExportFunction func = funcs.computeIfAbsent(export, instance::export);
    long[] out = guarded(export, slot, deadline, () -> func.apply(args));
    long[] results = new long[type.results().size()];
    for (int i = 0; i < results.length; i++) {
      results[i] =
          switch (type.results().get(i)) {
            case I32, F32 -> out[i] & 0xffff_ffffL; // zero-extended, as wasmtime gives them
            default -> out[i];
          };
    }
    return results;
  }

  static <T> T guarded(String export, CallWatchdog.Slot slot, Duration deadline, Supplier<T> body) {
    slot.start(deadline);
    try {
      return body.get();
    } catch (ChicoryInterruptedException e) {
      if (slot.end()) {
        throw Failures.deadline(export, deadline, e);
      }
      Thread.currentThread().interrupt(); // not ours: keep it for whoever asked
      throw Failures.trap(export, "the calling thread was interrupted", e);
    } catch (StackOverflowError e) {
      throw Failures.trap(export, "call stack exhausted", e);
    } catch (DriverException e) {
      throw e;
    } catch (RuntimeException e) {
      throw Failures.trap(export, String.valueOf(e.getMessage()), e);
    } finally {
      slot.end();
    }
  }

  /** The class running the guest's functions (generated at build time or at run time). */
  Class<?> machineClass() {
    return instance.getMachine().getClass();
  }

  Memory rawMemory() {
    return instance.memory();
  }

  @Override
  public GuestMemory memory() {
    if (memory == null) {
      throw Failures.noSuchExport("memory");
    }
    return memory;
  }

  /** Chicory holds no native resources; closing forbids further calls and frees the slot. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      funcs.clear();
      watchdog.unregister(slot);
    }
  }
}
