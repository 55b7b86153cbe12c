package io.capsule.bench.driver;

import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * What the WASI preview1 adapter costs per {@code parse}: the built-in {@code jsonl} driver
 * (import-free) beside the same source built for wasm32-wasi and adapted
 * (drivers/fixtures/wasi/jsonl-wasi), per engine and batch size, on lines of the jsonl contract.
 * The WASI component is read from {@code -Dcapsule.bench.wasiDriver} (default: the committed
 * fixture, relative to the repository root). Read the {@code lines} counter (lines/s).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class WasiParseBench {

  @Param({"wasmtime", "chicory"})
  public String engine;

  @Param({"builtin", "wasi"})
  public String build;

  @Param({"1", "16", "256"})
  public int batch;

  private DriverLoader loader;
  private LoadedDriver loaded;
  private ProcessDriver driver;
  private List<String> lines;

  /** Lines handed over, per second: the figure to read. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Lines {
    public long lines;

    @Setup(Level.Iteration)
    public void reset() {
      lines = 0;
    }
  }

  @Setup(Level.Trial)
  public void load() {
    loader = DriverLoader.create(engine, DriverLoader.Settings.DEFAULTS);
    if (build.equals("builtin")) {
      loaded = loader.load("builtin:jsonl");
    } else {
      Path wasm =
          Path.of(
              System.getProperty(
                  "capsule.bench.wasiDriver",
                  "drivers/src/test/resources/fixtures/wasi/jsonl-wasi.wasm"));
      try {
        loaded = loader.loadBytes("jsonl-wasi", Files.readAllBytes(wasm));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    lines = new ArrayList<>(batch);
    for (int i = 0; i < batch; i++) {
      lines.add(
          i % 4 == 3
              ? "{\"type\":\"usage\",\"usage\":{\"fresh_input\":12,\"output\":" + i + "}}"
              : "{\"type\":\"delta\",\"text\":\"word " + i + " of a streamed answer\"}");
    }
  }

  @Setup(Level.Iteration)
  public void freshInstance() {
    if (driver != null) {
      driver.close();
    }
    driver = loaded.newInstance();
  }

  @TearDown(Level.Trial)
  public void close() {
    driver.close();
    loader.close();
  }

  @Benchmark
  public Object parse(Lines counter) {
    counter.lines += lines.size();
    return driver.parse(lines);
  }
}
