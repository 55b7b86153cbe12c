package io.capsule.driver.wasm;

import java.time.Duration;
import java.util.Set;

/** A compiled core module, shared by every run of one driver artifact. Thread-safe. */
public interface WasmModule {

  /** Hex sha256 of the original module bytes (the cache key). */
  String sha256();

  /** Names of the exported functions. */
  Set<String> functionExports();

  /**
   * A fresh instance with no imports. Calls {@code _initialize} when exported (within the call
   * deadline). Every later call is bounded by {@code callDeadline}, restarted before each call.
   */
  WasmInstance instantiate(Duration callDeadline);
}
