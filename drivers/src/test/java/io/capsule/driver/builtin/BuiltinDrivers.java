package io.capsule.driver.builtin;

import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.engine.Engines;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The committed built-in components, loaded the way the runtime loads them ({@code builtin:NAME}
 * from the classpath), once per engine and driver for a test class, which registers it as a static
 * extension ({@code @RegisterExtension static final BuiltinDrivers drivers}) and so has them closed
 * after its last test. Not thread-safe: one test class, one thread.
 */
final class BuiltinDrivers implements AutoCloseable, AfterAllCallback {

  static final List<String> NAMES = List.of("claude-code", "codex", "gemini", "jsonl");

  static List<String> engines() {
    return Engines.NAMES;
  }

  /**
   * Every golden transcript on every engine in batches of each of {@code splits}: test arguments.
   */
  static Stream<Arguments> transcriptRuns(List<Integer> splits) {
    return engines().stream()
        .flatMap(
            engine ->
                Golden.index().stream()
                    .flatMap(entry -> splits.stream().map(s -> Arguments.of(engine, entry, s))));
  }

  private final Map<String, DriverLoader> loaders = new HashMap<>();
  private final Map<String, LoadedDriver> loaded = new HashMap<>();

  LoadedDriver load(String engine, String driver) {
    return loaded.computeIfAbsent(
        engine + "/" + driver,
        key ->
            loaders
                .computeIfAbsent(
                    engine, e -> DriverLoader.create(e, DriverLoader.Settings.DEFAULTS))
                .loadBuiltin(driver, Optional.empty()));
  }

  /** A fresh instance, as each run gets its own; the caller closes it. */
  ProcessDriver instance(String engine, String driver) {
    return load(engine, driver).newInstance();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
  }

  @Override
  public void close() {
    loaders.values().forEach(DriverLoader::close);
    loaders.clear();
    loaded.clear();
  }
}
