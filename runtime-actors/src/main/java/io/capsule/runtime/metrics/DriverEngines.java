package io.capsule.runtime.metrics;

import io.capsule.driver.wasm.WasmProcessDriver;

/**
 * The {@code engine} tag of a driver call: {@code wasmtime} or {@code chicory} for a WASM driver,
 * {@code java} for a driver written in Java (an embedder's registered one).
 *
 * <p>Read from the instance, not from the settings: a node may run registered Java drivers beside
 * WASM ones, and the engine a WASM module was compiled by is what its instance is made of. The two
 * engines' instance classes are named after them ({@code ChicoryInstance}, {@code
 * WasmtimeGraphInstance}, …); an instance of a third engine is tagged {@code wasm}.
 */
public final class DriverEngines {
  private DriverEngines() {}

  public static String of(Object driver) {
    if (!(driver instanceof WasmProcessDriver wasm)) {
      return "java";
    }
    String type = wasm.instance().getClass().getSimpleName();
    if (type.startsWith("Wasmtime")) {
      return "wasmtime";
    }
    return type.startsWith("Chicory") ? "chicory" : "wasm";
  }
}
