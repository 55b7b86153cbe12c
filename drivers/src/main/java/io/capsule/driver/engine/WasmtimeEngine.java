package io.capsule.driver.engine;

import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.wasm.WasmEngine;
import io.capsule.driver.wasm.WasmInstance;
import io.capsule.driver.wasm.WasmModule;
import io.github.kawamuray.wasmtime.Config;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Module;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The default engine: Wasmtime (native, via wasmtime-java 0.19.0, Wasmtime 7). Calls are bounded by
 * epoch interruption (an {@link EpochTicker} per engine); memory by the rewritten declared maximum
 * ({@link PreparedModule}), since this binding has neither fuel nor a memory limiter.
 *
 * <p>Thread-safe: compiled modules are shared; each instance has its own store, confined to one
 * thread at a time. {@link #close()} stops the ticker and frees every compiled module; instances
 * still open must not be used afterwards.
 */
public final class WasmtimeEngine implements WasmEngine {

  public static final String NAME = "wasmtime";

  private final Engine engine;
  private final EpochTicker ticker;
  private final List<Module> modules = new ArrayList<>();
  private boolean closed;
  private final Map<String, Module> helpers = new HashMap<>();

  public WasmtimeEngine() {
    // Before the first wasmtime-java class loads its JNI library itself, so that the copy it
    // extracts into the temp dir is removed (see WasmtimeNativeLibrary).
    WasmtimeNativeLibrary.ensureLoaded();
    // The Engine takes ownership of the Config (the binding moves it), so it is not disposed here.
    this.engine = new Engine(new Config().epochInterruption(true));
    this.ticker = new EpochTicker(engine);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public WasmModule compile(byte[] coreModule, long memoryCapBytes) {
    PreparedModule prepared = PreparedModule.prepare(coreModule, memoryCapBytes);
    Module module;
    try {
      module = new Module(engine, prepared.cappedBytes());
    } catch (RuntimeException e) {
      throw Failures.unloadable("wasmtime cannot compile the driver: " + e.getMessage(), e);
    }
    synchronized (this) {
      if (closed) {
        module.dispose();
        throw new IllegalStateException("the wasmtime engine is closed");
      }
      modules.add(module);
    }
    return new Compiled(prepared, module);
  }

  @Override
  public WasmModule compileGraph(CoreGraph graph, long memoryCapBytes) {
    List<Module> compiled = new ArrayList<>();
    try {
      WasmtimeGraph result =
          WasmtimeGraph.compile(engine, graph, memoryCapBytes, compiled::add, ticker);
      synchronized (this) {
        if (closed) {
          throw new IllegalStateException("the wasmtime engine is closed");
        }
        modules.addAll(compiled);
      }
      return result;
    } catch (RuntimeException e) {
      compiled.forEach(Module::dispose);
      throw e;
    }
  }

  /**
   * One of the {@link WasmtimeHelpers} modules by resource name, compiled once per engine on first
   * use.
   */
  private synchronized Module helper(String resource) {
    if (closed) {
      throw new IllegalStateException("the wasmtime engine is closed");
    }
    Module helper = helpers.get(resource);
    if (helper == null) {
      byte[] bytes;
      try (InputStream in = WasmtimeEngine.class.getResourceAsStream(resource)) {
        if (in == null) {
          throw new IllegalStateException("missing resource " + resource);
        }
        bytes = in.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      helper = new Module(engine, bytes);
      helpers.put(resource, helper);
      modules.add(helper);
    }
    return helper;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    ticker.close();
    modules.forEach(Module::dispose);
    modules.clear();
    engine.dispose();
  }

  private final class Compiled implements WasmModule {
    private final PreparedModule prepared;
    private final Module module;

    Compiled(PreparedModule prepared, Module module) {
      this.prepared = prepared;
      this.module = module;
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
      ticker.ensureStarted();
      return WasmtimeInstance.create(
          engine, module, prepared, callDeadline, ticker, WasmtimeEngine.this::helper);
    }
  }
}
