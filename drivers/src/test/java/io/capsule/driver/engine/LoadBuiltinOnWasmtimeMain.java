package io.capsule.driver.engine;

import io.capsule.driver.api.Description;
import io.capsule.driver.load.DriverLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.TreeSet;

/**
 * A child JVM for {@link WasmtimeNativeLibraryTest}: loads the built-in {@code jsonl} driver on the
 * wasmtime engine (which calls its {@code describe()}), then prints, one per line, {@code described
 * <harness> <binary>} and {@code mapped <path>} for every wasmtime JNI library this process has
 * mapped (the kernel appends {@code " (deleted)"} to a path whose name was removed).
 */
public final class LoadBuiltinOnWasmtimeMain {
  private LoadBuiltinOnWasmtimeMain() {}

  public static void main(String[] args) throws IOException {
    try (DriverLoader loader =
        DriverLoader.create(WasmtimeEngine.NAME, DriverLoader.Settings.DEFAULTS)) {
      Description d = loader.loadBuiltin("jsonl", Optional.empty()).description();
      System.out.println("described " + d.harness() + " " + d.binary());
      TreeSet<String> mapped = new TreeSet<>();
      for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
        int at = line.indexOf('/');
        if (at >= 0 && line.contains("libwasmtime_jni")) {
          mapped.add(line.substring(at).strip());
        }
      }
      mapped.forEach(path -> System.out.println("mapped " + path));
    }
  }
}
