package io.capsule.bench.runtime;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.runtime.CapsuleRef;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
 * {@link EndToEndBench} with the real built-in {@code claude-code} driver component parsing every
 * line (the goal: end to end ≥ 0.2× {@code cat} into a Java line counter): the harness prints the
 * recorded Claude Code lines (without {@code result} lines, which end a turn) as fast as {@code
 * cat} can, the component turns them into events on {@code engine}, the runtime relays them to a
 * listener. Beside it, in the same run, {@code cat} of the same file into a bare Java line counter.
 * Each operation is the whole stream, timed once: lines/s = {@code lines} ÷ the score.
 *
 * <p>Every operation checks that the listener got as many completed texts as the component makes
 * from the file (counted once at setup through a separate instance), so a fast wrong answer cannot
 * score.
 *
 * <p>100 warm-up shots, 10 measured: a run's code is still being compiled after 20 runs (the JIT
 * took 34 ms of a 130 ms run's CPU then, ~10 ms after 100; {@link EndToEndCpu} prints the split),
 * so the 3 warm-up shots this bench once had measured a JVM still warming up, and 30 still too few
 * (2026-12-03, quiet machine, same window: 0.178 of {@code cat} after 30, 0.302 after 100).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 100)
@Measurement(iterations = 10)
@Fork(1)
public class EndToEndComponentBench {

  /** ~50k lines of ~600 B (~30 MB): the component parses slower than the Java driver. */
  @Param({"50000"})
  public int lines;

  @Param({"wasmtime", "chicory"})
  public String engine;

  private Path file;
  private BenchRuntime rt;
  private DriverLoader loader;
  private CapsuleRef capsule;
  private long expectedTexts;
  private int runs;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    List<String> recorded = RecordedLines.withoutResults();
    file = RecordedLines.write(lines, recorded);
    loader = DriverLoader.create(engine, DriverLoader.Settings.DEFAULTS);
    LoadedDriver claude = loader.load("builtin:claude-code");
    expectedTexts = texts(claude, Files.readAllLines(file, StandardCharsets.UTF_8));
    rt = BenchRuntime.start("e2e-component");
    capsule =
        rt.register("claude-component", () -> new ClaudeComponentDriver(claude.newInstance()));
  }

  /** How many {@code text} events the component makes from {@code all}, in batches of 256. */
  static long texts(LoadedDriver driver, List<String> all) {
    long texts = 0;
    try (ProcessDriver d = driver.newInstance()) {
      for (int at = 0; at < all.size(); at += 256) {
        for (Event e : d.parse(all.subList(at, Math.min(all.size(), at + 256)))) {
          if (e instanceof Event.Text) {
            texts++;
          }
        }
      }
    }
    if (texts == 0) {
      throw new IllegalStateException("the recorded lines make no text events");
    }
    return texts;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    rt.close();
    loader.close();
    Files.deleteIfExists(file);
  }

  /** The baseline: the child's stdout read line by line, as the runtime's reader must. */
  @Benchmark
  public long catIntoJavaLineCounter() throws IOException, InterruptedException {
    return BenchRuntime.catLines(file, lines);
  }

  /** The runtime with the real component: spawn, frame, batch, sandboxed parse, relay, stream. */
  @Benchmark
  public long runWithClaudeComponent() {
    return rt.runCountingTexts("e2e-component-" + ++runs, capsule, file, expectedTexts);
  }
}
