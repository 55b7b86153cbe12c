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

  /**
   * Compiles a component's whole core graph (a driver that imports WASI): every module is compiled
   * once; each {@link WasmModule#instantiate} wires a fresh set of instances with a fresh WASI
   * host. The main module's memory is capped like {@link #compile}'s. Engines without support
   * refuse with {@code E-RUN-032}.
   */
  default WasmModule compileGraph(
      io.capsule.driver.component.CoreGraph graph, long memoryCapBytes) {
    throw new DriverException(
        io.capsule.config.diag.Diagnostic.of(
            io.capsule.config.diag.Code.E_RUN_032,
            "the " + name() + " engine cannot run drivers that import WASI"));
  }

  @Override
  void close();
}
