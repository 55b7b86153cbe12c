package io.capsule.bench.driver;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@code parse} throughput in lines per second through a driver component, per driver, engine and
 * batch size, beside a bare Jackson {@code readTree} of the same lines in the same run: the ratio
 * is what sandboxing the parser costs. Lines are the real transcripts of each harness (recorded
 * from the real CLIs; the jsonl contract's own examples for the jsonl builds), cycled.
 *
 * <p>{@code driver}: the four built-ins (import-free, {@code builtin:NAME}), and two WASI builds of
 * the jsonl driver beside the built-in {@code jsonl} — {@code jsonl-wasi} (Rust for wasm32-wasi)
 * and {@code jsonl-c} (C on wasi-libc), each wrapped with the preview1 adapter — whose difference
 * from {@code jsonl} is the adapter's cost per call. The WASI components are read from {@code
 * -Dcapsule.bench.wasiFixtures} (default: the committed fixtures, relative to the repository root).
 * Narrow a run with {@code -p driver=claude-code}.
 *
 * <p>Read the {@code lines} secondary counter (lines/s); the primary score counts batches. {@code
 * batch} follows docs/run-semantics.md §5: 1 line, a typical 16, and the 256-line ceiling. Each
 * iteration gets a fresh driver instance, as each run does.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ParseBench {

  /** Each driver's transcript folder and files. */
  static final Map<String, List<String>> TRANSCRIPTS =
      Map.of(
          "claude-code",
          List.of("auth401", "happy", "interrupt", "mcp", "rate429", "thinking", "twoturn"),
          "codex",
          List.of("auth401", "happy", "interrupt", "mcp", "rate429"),
          "gemini-cli",
          List.of("auth401", "happy", "interrupt", "mcp", "rate429"),
          "jsonl",
          List.of("error", "happy", "tools"));

  @Param({"claude-code", "codex", "gemini", "jsonl", "jsonl-wasi", "jsonl-c"})
  public String driver;

  @Param({"wasmtime", "chicory"})
  public String engine;

  @Param({"1", "16", "256"})
  public int batch;

  private DriverLoader loader;
  private LoadedDriver loaded;
  private ProcessDriver instance;
  private final ObjectMapper mapper = new ObjectMapper();
  private List<List<String>> batches;
  private int next;

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
    loaded = load(loader, driver);
    List<String> all = transcriptLines(transcriptsOf(driver));
    batches = new ArrayList<>();
    int at = 0;
    // enough batches that a batch of 256 still cycles through every transcript
    int count = Math.max(64, (all.size() * 4) / batch + 1);
    for (int b = 0; b < count; b++) {
      List<String> one = new ArrayList<>(batch);
      for (int i = 0; i < batch; i++) {
        one.add(all.get(at));
        at = (at + 1) % all.size();
      }
      batches.add(List.copyOf(one));
    }
  }

  @Setup(Level.Iteration)
  public void freshInstance() {
    if (instance != null) {
      instance.close();
    }
    instance = loaded.newInstance();
  }

  @TearDown(Level.Trial)
  public void close() {
    instance.close();
    loader.close();
  }

  private List<String> nextBatch() {
    List<String> b = batches.get(next);
    next = (next + 1) % batches.size();
    return b;
  }

  @Benchmark
  public Object parse(Lines counter) {
    List<String> b = nextBatch();
    counter.lines += b.size();
    return instance.parse(b);
  }

  @Benchmark
  public void jacksonReadTree(Lines counter, Blackhole hole) throws IOException {
    List<String> b = nextBatch();
    counter.lines += b.size();
    for (String line : b) {
      hole.consume(mapper.readTree(line));
    }
  }

  /** A built-in by name, or a WASI build of the jsonl driver from the fixtures folder. */
  static LoadedDriver load(DriverLoader loader, String driver) {
    if (!driver.startsWith("jsonl-")) {
      return loader.load("builtin:" + driver);
    }
    Path wasm =
        Path.of(
                System.getProperty(
                    "capsule.bench.wasiFixtures", "drivers/src/test/resources/fixtures/wasi"))
            .resolve(driver + ".wasm");
    try {
      return loader.loadBytes(driver, Files.readAllBytes(wasm));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String transcriptsOf(String driver) {
    return switch (driver) {
      case "gemini" -> "gemini-cli";
      case "jsonl-wasi", "jsonl-c" -> "jsonl";
      default -> driver;
    };
  }

  static List<String> transcriptLines(String folder) {
    List<String> out = new ArrayList<>();
    for (String name : TRANSCRIPTS.get(folder)) {
      String path = "/transcripts/" + folder + "/" + name + ".jsonl";
      try (InputStream in = ParseBench.class.getResourceAsStream(path)) {
        if (in == null) {
          throw new IllegalStateException("missing resource " + path);
        }
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          if (!line.isEmpty()) {
            out.add(line);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }
}
