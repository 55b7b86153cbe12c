package io.capsule.config.settings;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code capsule.driver.*}: how driver artifacts are run.
 *
 * @param memoryCapBytes linear-memory cap per instance, a whole number of 64 KiB pages
 * @param engine which WebAssembly engine runs drivers
 */
public record DriverSettings(long memoryCapBytes, DriverSettings.Engine engine) {

  /** A wasm page: linear memory grows in these, so the cap is a whole number of them. */
  public static final long WASM_PAGE = 64 * 1024;

  /** wasm32 addresses at most 4 GiB. */
  public static final long WASM32_MAX = 4L * 1024 * 1024 * 1024;

  /** The WebAssembly engines (docs/architecture.md, "WASM engines"). */
  public enum Engine {
    /** Native Wasmtime through wasmtime-java (JNI); the default. */
    WASMTIME,
    /** Pure-Java Chicory; no native code. */
    CHICORY;

    /** The spelling in {@code capsule.driver.engine}. */
    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Optional<Engine> byName(String name) {
      for (Engine e : values()) {
        if (e.configName().equals(name)) {
          return Optional.of(e);
        }
      }
      return Optional.empty();
    }
  }

  public DriverSettings {
    Objects.requireNonNull(engine, "engine");
  }

  /** The cap in wasm pages (what the memory section's maximum is rewritten to). */
  public long memoryCapPages() {
    return memoryCapBytes / WASM_PAGE;
  }

  static DriverSettings read(SettingsReader r) {
    String capKey = "capsule.driver.memory-cap";
    long cap = r.bytes(capKey, WASM_PAGE, WASM32_MAX);
    if (cap % WASM_PAGE != 0) {
      r.problem(capKey, "must be a whole number of 64 KiB wasm pages, got " + cap + " bytes");
    }
    String engineKey = "capsule.driver.engine";
    String name = r.optionalText(engineKey).orElse("");
    Optional<Engine> engine = Engine.byName(name);
    if (engine.isEmpty()) {
      r.problem(engineKey, "must be wasmtime or chicory, got '" + name + "'");
    }
    return new DriverSettings(cap, engine.orElse(Engine.WASMTIME));
  }
}
