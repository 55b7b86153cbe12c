package io.capsule.bench.driver;

import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.engine.ChicoryEngine;
import io.capsule.driver.engine.Engines;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.driver.wasm.WasmEngine;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a run pays to get its driver instance: {@code newInstance} of a driver whose compiled module
 * is cached (every run after the first; the target is 1 ms or less), beside a first load (a fresh
 * loader: read and check the component, compile it, instantiate, {@code describe}). Per engine, for
 * the built-in {@code claude-code}. Average time per operation, in milliseconds. {@code chicory}
 * uses the classes compiled at build time; {@code chicory-run-time} compiles the same module at run
 * time, as before build-time compilation (and as a folder driver still is).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
public class InstantiateBench {

  @Param({"wasmtime", "chicory", "chicory-run-time"})
  public String engine;

  private WasmEngine wasm;
  private DriverLoader loader;
  private LoadedDriver loaded;

  private WasmEngine newEngine() {
    return engine.equals("chicory-run-time")
        ? ChicoryEngine.runTimeCompiledOnly()
        : Engines.create(engine);
  }

  @Setup(Level.Trial)
  public void load() {
    wasm = newEngine();
    loader = new DriverLoader(wasm, DriverLoader.Settings.DEFAULTS);
    loaded = loader.load("builtin:claude-code");
  }

  @TearDown(Level.Trial)
  public void close() {
    loader.close();
    wasm.close();
  }

  /** A run's instance from the cached compiled driver; closed again, as a run ends. */
  @Benchmark
  @Warmup(iterations = 3, time = 2)
  @Measurement(iterations = 5, time = 2)
  public void cachedInstance() {
    try (ProcessDriver driver = loaded.newInstance()) {
      driver.hashCode(); // uses the resource (javac -Xlint:try), costs nothing
    }
  }

  /** The first load of the driver in a fresh loader (nothing cached), then its first instance. */
  @Benchmark
  @Warmup(iterations = 1, batchSize = 1)
  @Measurement(iterations = 5, batchSize = 1)
  @BenchmarkMode(Mode.SingleShotTime)
  public void firstLoad() {
    try (WasmEngine freshEngine = newEngine();
        DriverLoader fresh = new DriverLoader(freshEngine, DriverLoader.Settings.DEFAULTS);
        ProcessDriver driver = fresh.load("builtin:claude-code").newInstance()) {
      driver.hashCode(); // uses the resource (javac -Xlint:try), costs nothing
    }
  }
}
