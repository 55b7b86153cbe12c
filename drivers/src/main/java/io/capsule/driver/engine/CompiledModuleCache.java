package io.capsule.driver.engine;

import io.capsule.driver.wasm.WasmEngine;
import io.capsule.driver.wasm.WasmModule;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiled modules by the sha256 of their bytes (and the memory cap they were compiled under), so
 * every run of one driver artifact shares one compilation. A failed compilation is not cached: the
 * next load tries again and fails with the same code.
 *
 * <p>Thread-safe. Holds modules for as long as the cache lives; the engine frees them on close.
 */
public final class CompiledModuleCache {

  private record Key(String sha256, long memoryCapBytes) {}

  private final WasmEngine engine;
  private final ConcurrentHashMap<Key, WasmModule> modules = new ConcurrentHashMap<>();

  public CompiledModuleCache(WasmEngine engine) {
    this.engine = engine;
  }

  public WasmEngine engine() {
    return engine;
  }

  /** The compiled module for {@code coreModule}, compiling it on first use. */
  public WasmModule compile(byte[] coreModule, long memoryCapBytes) {
    Key key = new Key(Sha256.hex(coreModule), memoryCapBytes);
    return modules.computeIfAbsent(key, k -> engine.compile(coreModule, memoryCapBytes));
  }

  /** How many distinct modules are compiled. */
  public int size() {
    return modules.size();
  }
}
