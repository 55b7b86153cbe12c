package io.capsule.bench.driver;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.DriverLoader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link ParseBench}'s ratio measured in CPU time instead of wall time: lines per CPU-second of the
 * calling thread for {@code parse} and for Jackson {@code readTree} of the same lines, alternating
 * one CPU-second rounds of each in one JVM. Why: on a shared machine at load 20–30 a JMH
 * iteration's wall time depends on how often the thread was scheduled, and the two rows of a
 * ParseBench run can see different loads; CPU time counts only the time the thread ran (both
 * engines run guest code on the calling thread). Use it to compare levers on a busy machine; quote
 * ParseBench from a quiet one.
 *
 * <pre>
 * java -XX:-DontCompileHugeMethods -cp benchmarks/target/benchmarks.jar \
 *   io.capsule.bench.driver.ParseCpuRatio claude-code wasmtime 16 [rounds]
 * </pre>
 */
public final class ParseCpuRatio {

  private static final long ROUND_NS = 1_000_000_000L;

  /** About how many lines run between two reads of the CPU clock. */
  private static final int CLOCK_EVERY_LINES = 4096;

  private ParseCpuRatio() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      System.err.println("usage: ParseCpuRatio DRIVER ENGINE BATCH [ROUNDS]");
      System.exit(2);
    }
    String driver = args[0];
    String engine = args[1];
    int batch = Integer.parseInt(args[2]);
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 6;
    List<String> all = ParseBench.transcriptLines(ParseBench.transcriptsOf(driver));
    List<List<String>> batches = new ArrayList<>();
    int at = 0;
    for (int b = 0; b < Math.max(64, all.size() * 4 / batch + 1); b++) {
      List<String> one = new ArrayList<>(batch);
      for (int i = 0; i < batch; i++) {
        one.add(all.get(at));
        at = (at + 1) % all.size();
      }
      batches.add(List.copyOf(one));
    }
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    // The thread's CPU clock is a system call (~0.4 µs measured), read once per this many batches:
    // read after every batch it was a third of a short line's Jackson time at batch 1 and ~10 %
    // at batch 16, added to both sides, which drew the short-line drivers' ratios toward 1.
    int between = Math.max(1, CLOCK_EVERY_LINES / batch);
    ObjectMapper mapper = new ObjectMapper();
    long sink = 0;
    double parseSum = 0;
    double jacksonSum = 0;
    try (DriverLoader loader = DriverLoader.create(engine, DriverLoader.Settings.DEFAULTS);
        ProcessDriver instance = ParseBench.load(loader, driver).newInstance()) {
      // two rounds of warm-up, then the measured ones
      for (int r = -2; r < rounds; r++) {
        long start = threads.getCurrentThreadCpuTime();
        long lines = 0;
        int n = 0;
        while (threads.getCurrentThreadCpuTime() - start < ROUND_NS) {
          for (int k = 0; k < between; k++) {
            List<String> b = batches.get(n++ % batches.size());
            sink += instance.parse(b).size();
            lines += b.size();
          }
        }
        double parse = lines / ((threads.getCurrentThreadCpuTime() - start) / 1e9);
        start = threads.getCurrentThreadCpuTime();
        lines = 0;
        n = 0;
        while (threads.getCurrentThreadCpuTime() - start < ROUND_NS) {
          for (int k = 0; k < between; k++) {
            List<String> b = batches.get(n++ % batches.size());
            for (String line : b) {
              sink += mapper.readTree(line).size();
            }
            lines += b.size();
          }
        }
        double jackson = lines / ((threads.getCurrentThreadCpuTime() - start) / 1e9);
        if (r >= 0) {
          parseSum += parse;
          jacksonSum += jackson;
        }
      }
    }
    System.out.printf(
        "%s %s batch %d: parse %.0f, Jackson readTree %.0f lines per CPU-second, ratio %.3f"
            + " (%d rounds; checksum %d)%n",
        driver,
        engine,
        batch,
        parseSum / rounds,
        jacksonSum / rounds,
        parseSum / jacksonSum,
        rounds,
        sink);
  }
}
