package io.capsule.driver.engine;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.WasmEngine;
import java.util.List;

/** Engine selection by the name the setting {@code capsule.driver.engine} carries. */
public final class Engines {
  private Engines() {}

  /** The names {@link #create} accepts; the first is the default. */
  public static final List<String> NAMES = List.of(WasmtimeEngine.NAME, ChicoryEngine.NAME);

  /** A new engine; the caller owns it and closes it when the runtime stops. */
  public static WasmEngine create(String name) {
    return switch (name) {
      case WasmtimeEngine.NAME -> new WasmtimeEngine();
      case ChicoryEngine.NAME -> new ChicoryEngine();
      default ->
          throw new DriverException(
              Diagnostic.of(
                      Code.E_CFG_001,
                      "capsule.driver.engine is '" + name + "'; it must be one of " + NAMES)
                  .with("key", "capsule.driver.engine"));
    };
  }
}
