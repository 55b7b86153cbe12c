package io.capsule.bench.runtime;

import io.capsule.runtime.CapsuleRef;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * End-to-end lines/s: one run whose harness prints {@code lines} recorded Claude Code lines as fast
 * as {@code cat} can, through a Java driver ({@link CatDriver}: one {@code text} event per line),
 * to a local listener counting the events in a {@code Sink}; beside the same {@code cat} piped into
 * a bare Java line counter in the same JVM and run. Each operation is the whole stream (spawn to
 * {@code Finished}), timed once: lines/s = {@code lines} ÷ the score. The ratio of the two is what
 * the runtime costs per line over the pipe itself.
 *
 * <p>Every operation checks that every line arrived, so a fast wrong answer cannot score.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 5)
@Fork(1)
public class EndToEndBench {

  /**
   * ~200k lines of ~620 B (~120 MB): a long agent session's output, a few seconds through the
   * runtime.
   */
  @Param({"200000"})
  public int lines;

  private Path file;
  private BenchRuntime rt;
  private CapsuleRef capsule;
  private int runs;

  @Setup(Level.Trial)
  public void setUp() {
    file = RecordedLines.write(lines);
    rt = BenchRuntime.start("e2e");
    capsule = rt.register("cat", CatDriver::new);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    rt.close();
    Files.deleteIfExists(file);
  }

  /** The baseline: the child's stdout read line by line, as the runtime's reader must. */
  @Benchmark
  public long catIntoJavaLineCounter() throws IOException, InterruptedException {
    return BenchRuntime.catLines(file, lines);
  }

  /** The runtime: spawn, frame, batch, parse in the Java driver, ledger, relay, stream. */
  @Benchmark
  public long runWithJavaDriver() {
    return rt.runCountingTexts("e2e-" + ++runs, capsule, file, lines);
  }
}
