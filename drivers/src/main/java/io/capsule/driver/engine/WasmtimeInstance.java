package io.capsule.driver.engine;

import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmInstance;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * One wasmtime store + instance. The epoch deadline is set before instantiation (so a start
 * function and {@code _initialize} are bounded too) and again before every call.
 *
 * <p>With a {@code cabi_realloc} and a memory, a {@code list<string>} is lowered by {@link
 * WasmtimeStringLists} in one call, and a one-i32 post-return is deferred to the next call into the
 * instance (run inside that helper call, or just before any other export): see there for why the
 * canonical ABI allows both. With a memory, an export of core type {@code (i32, i32) -> i32}
 * ({@code parse}) is called through {@link WasmtimeCallPairs}, so no value crosses JNI; and {@link
 * #callWithStrings} makes a {@code parse}'s lowering and call one crossing ({@link
 * WasmtimeStringLists#lowerAndCall}).
 *
 * <p>Not thread-safe: a store must be used by one thread at a time; the run's driver actor owns it.
 */
final class WasmtimeInstance implements WasmInstance {

  private static final long[] NO_RESULTS = {};

  private final Store<Void> store;
  private final Instance instance;
  private final PreparedModule prepared;
  private final Duration deadline;
  private final Memory memory;
  private final WasmtimeBufferMemory guestMemory;
  private final WasmtimeExports exports;
  private final WasmtimeHelpers helpers;
  private final WasmtimeStringLists stringLists;
  private final WasmtimeCallPairs callPairs;
  private boolean closed;

  private WasmtimeInstance(
      Store<Void> store,
      Instance instance,
      PreparedModule prepared,
      Duration deadline,
      EpochTicker ticker,
      Function<String, Module> helperModules) {
    this.store = store;
    this.instance = instance;
    this.prepared = prepared;
    this.deadline = deadline;
    StoreDeadline armed =
        new StoreDeadline(EpochTicker.ticks(deadline), ticker::ticks, store::setEpochDeadline);
    this.memory = instance.getMemory(store, "memory").orElse(null);
    this.guestMemory = new WasmtimeBufferMemory(this, this::buffer, () -> memory.dataSize(store));
    this.exports =
        new WasmtimeExports(
            store,
            armed,
            guestMemory,
            prepared::signature,
            this::lookup,
            (export, e) -> classify(export, deadline, e));
    if (memory == null) {
      this.helpers = null;
      this.stringLists = null;
      this.callPairs = null;
    } else {
      BiFunction<String, RuntimeException, RuntimeException> failed =
          (export, e) -> classify(export, deadline, e);
      this.helpers = new WasmtimeHelpers(store, helperModules, memory, armed, guestMemory);
      this.callPairs = new WasmtimeCallPairs(helpers, prepared::signature, this::lookup, failed);
      this.stringLists =
          hasExport("cabi_realloc")
              ? new WasmtimeStringLists(helpers, prepared::signature, this::lookup, failed)
              : null;
      if (stringLists != null) {
        guestMemory.offerStringLists(stringLists);
      }
    }
  }

  /**
   * @param helperModules the compiled {@link WasmtimeHelpers} modules by resource name, fetched at
   *     the first call that uses one when the driver exports a memory
   */
  static WasmtimeInstance create(
      Engine engine,
      Module module,
      PreparedModule prepared,
      Duration deadline,
      EpochTicker ticker,
      Function<String, Module> helperModules) {
    Store<Void> store = new Store<>(null, engine);
    Instance instance;
    try {
      store.setEpochDeadline(EpochTicker.ticks(deadline));
      instance = new Instance(store, module, List.of());
    } catch (RuntimeException e) {
      store.dispose();
      throw classify("instantiation", deadline, e);
    }
    WasmtimeInstance created =
        new WasmtimeInstance(store, instance, prepared, deadline, ticker, helperModules);
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
    if (stringLists != null) {
      // A post-return runs inside the next list's helper call, or just before any other call.
      if (stringLists.defers(export, args)) {
        return NO_RESULTS;
      }
      Map.Entry<String, Long> post = stringLists.takePendingPost();
      if (post != null) {
        exports.call(post.getKey(), new long[] {post.getValue()});
      }
    }
    if (callPairs != null && callPairs.takes(export, args)) {
      return callPairs.call(export, args);
    }
    return exports.call(export, args);
  }

  @Override
  public boolean callsWithStrings(String export, long bytes) {
    return !closed && stringLists != null && stringLists.takes(export, bytes);
  }

  /**
   * The pending post-return, the list's lowering and the export in one crossing ({@link
   * WasmtimeStringLists#lowerAndCall}); a bad pointer from the allocator fails as {@link
   * WasmtimeBufferMemory#allocStringList} fails.
   */
  @Override
  public long[] callWithStrings(String export, byte[][] strings) {
    if (closed) {
      throw new IllegalStateException("the instance is closed");
    }
    if (stringLists == null) {
      throw new UnsupportedOperationException("no string-list helper for this instance");
    }
    long[] packed = new long[1];
    Long result = stringLists.lowerAndCall(export, strings, packed);
    if (result == null) {
      int[] lengths = new int[strings.length];
      for (int i = 0; i < lengths.length; i++) {
        lengths[i] = strings[i].length;
      }
      throw guestMemory.refusal(packed[0], lengths);
    }
    return new long[] {result};
  }

  private Func lookup(String export) {
    return instance.getFunc(store, export).orElseThrow(() -> Failures.noSuchExport(export));
  }

  @Override
  public GuestMemory memory() {
    if (memory == null) {
      throw Failures.noSuchExport("memory");
    }
    return guestMemory;
  }

  /** A fresh view of the memory, little-endian (the binding hands out big-endian buffers). */
  ByteBuffer buffer() {
    return memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (helpers != null) {
      helpers.close();
    }
    exports.dispose();
    if (memory != null) {
      memory.dispose();
    }
    instance.dispose();
    store.dispose();
  }

  /**
   * Wasmtime reports a trap as a {@code WasmtimeException} whose text names the trap; an epoch
   * interruption says {@code wasm trap: INTERRUPT}.
   */
  private static DriverException classify(String export, Duration deadline, RuntimeException e) {
    String text = String.valueOf(e.getMessage());
    String lower = text.toLowerCase(java.util.Locale.ROOT);
    if (lower.contains("interrupt") || lower.contains("epoch")) {
      return Failures.deadline(export, deadline, e);
    }
    return Failures.trap(export, firstLine(text), e);
  }

  static String firstLine(String text) {
    int nl = text.indexOf('\n');
    return nl < 0 ? text : text.substring(0, nl);
  }
}
