package io.capsule.driver.wasm;

/**
 * The small seam between the driver host and a WebAssembly engine (wasmtime-java or Chicory).
 * Compile once, instantiate per run, call exports with integer/float values as raw bits.
 *
 * <p>Threading: an engine and its compiled modules are shared and thread-safe; an {@link
 * WasmInstance} is confined to one thread at a time (the run's driver actor).
 */
public interface WasmEngine extends AutoCloseable {

  /** {@code wasmtime} or {@code chicory}, as the setting {@code capsule.driver.engine} names it. */
  String name();

  /**
   * Compiles a core module. The module's memory maximum is capped at {@code memoryCapBytes}
   * (rewritten before compiling where the engine has no limiter). A module that imports anything is
   * refused with {@code E-RUN-032} naming the first import.
   */
  WasmModule compile(byte[] coreModule, long memoryCapBytes);

  @Override
  void close();
}
