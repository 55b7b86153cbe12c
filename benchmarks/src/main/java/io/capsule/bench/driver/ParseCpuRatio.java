package io.capsule.bench.driver;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.DriverLoader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
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
 * <p>Several drivers, comma-separated, are measured in the same JVM, their rounds interleaved
 * (round 1 of each, then round 2 of each, …), and each ratio is also given divided by the first
 * driver's: benchmarks/README.md compares the built-ins with {@code claude-code}, and a quotient of
 * ratios taken in one process, minute by minute, does not carry the drift between two JVM runs
 * (Jackson's own rate on the same lines moves by ±10 % from one JVM to the next on this machine).
 * The per-round spread of that quotient is printed beside it.
 *
 * <pre>
 * java -XX:-DontCompileHugeMethods -cp benchmarks/target/benchmarks.jar \
 *   io.capsule.bench.driver.ParseCpuRatio claude-code,jsonl,codex,gemini wasmtime 16 [rounds]
 * </pre>
 */
public final class ParseCpuRatio {

  private static final long ROUND_NS = 1_000_000_000L;

  /** About how many lines run between two reads of the CPU clock. */
  private static final int CLOCK_EVERY_LINES = 4096;

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private ParseCpuRatio() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      System.err.println("usage: ParseCpuRatio DRIVER[,DRIVER...] ENGINE BATCH [ROUNDS]");
      System.exit(2);
    }
    List<String> drivers = Arrays.asList(args[0].split(","));
    String engine = args[1];
    int batch = Integer.parseInt(args[2]);
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 6;
    List<Subject> subjects = new ArrayList<>();
    try (DriverLoader loader = DriverLoader.create(engine, DriverLoader.Settings.DEFAULTS)) {
      try {
        for (String driver : drivers) {
          subjects.add(new Subject(driver, batchesOf(driver, batch), loader));
        }
        // two rounds of warm-up, then the measured ones
        for (int r = -2; r < rounds; r++) {
          for (Subject s : subjects) {
            s.round(batch, r >= 0);
          }
        }
      } finally {
        for (Subject s : subjects) {
          s.instance.close();
        }
      }
    }
    Subject first = subjects.get(0);
    for (Subject s : subjects) {
      System.out.printf(
          "%s %s batch %d: parse %.0f, Jackson readTree %.0f lines per CPU-second, ratio %.3f"
              + " (%d rounds; checksum %d)%n",
          s.driver,
          engine,
          batch,
          s.parseSum / rounds,
          s.jacksonSum / rounds,
          s.ratio(),
          rounds,
          s.sink);
    }
    for (Subject s : subjects.subList(1, subjects.size())) {
      double[] perRound = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        perRound[r] = s.roundRatios.get(r) / first.roundRatios.get(r);
      }
      Arrays.sort(perRound);
      System.out.printf(
          "%s ÷ %s, batch %d: %.3f (per round: min %.3f, median %.3f, max %.3f)%n",
          s.driver,
          first.driver,
          batch,
          s.ratio() / first.ratio(),
          perRound[0],
          perRound[rounds / 2],
          perRound[rounds - 1]);
    }
  }

  /** The batches of a driver's transcript lines, cycled: at least 64, and four times the lines. */
  private static List<List<String>> batchesOf(String driver, int batch) {
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
    return batches;
  }

  /** One driver's instance, its lines and its sums. */
  private static final class Subject {
    final String driver;
    final List<List<String>> batches;
    final ProcessDriver instance;
    final ObjectMapper mapper = new ObjectMapper();
    final List<Double> roundRatios = new ArrayList<>();
    double parseSum;
    double jacksonSum;
    long sink;

    Subject(String driver, List<List<String>> batches, DriverLoader loader) {
      this.driver = driver;
      this.batches = batches;
      this.instance = ParseBench.load(loader, driver).newInstance();
    }

    double ratio() {
      return parseSum / jacksonSum;
    }

    /** One CPU-second of {@code parse}, then one of Jackson, on the same batches. */
    void round(int batch, boolean measured) {
      // The thread's CPU clock is a system call (~0.4 µs measured), read once per this many
      // batches: read after every batch it was a third of a short line's Jackson time at batch 1
      // and ~10 % at batch 16, added to both sides, which drew the short-line drivers' ratios
      // toward 1.
      int between = Math.max(1, CLOCK_EVERY_LINES / batch);
      long start = THREADS.getCurrentThreadCpuTime();
      long lines = 0;
      int n = 0;
      while (THREADS.getCurrentThreadCpuTime() - start < ROUND_NS) {
        for (int k = 0; k < between; k++) {
          List<String> b = batches.get(n++ % batches.size());
          sink += instance.parse(b).size();
          lines += b.size();
        }
      }
      double parse = lines / ((THREADS.getCurrentThreadCpuTime() - start) / 1e9);
      start = THREADS.getCurrentThreadCpuTime();
      lines = 0;
      n = 0;
      try {
        while (THREADS.getCurrentThreadCpuTime() - start < ROUND_NS) {
          for (int k = 0; k < between; k++) {
            List<String> b = batches.get(n++ % batches.size());
            for (String line : b) {
              sink += mapper.readTree(line).size();
            }
            lines += b.size();
          }
        }
      } catch (IOException e) {
        throw new IllegalStateException("a transcript line Jackson cannot read", e);
      }
      double jackson = lines / ((THREADS.getCurrentThreadCpuTime() - start) / 1e9);
      if (measured) {
        parseSum += parse;
        jacksonSum += jackson;
        roundRatios.add(parse / jackson);
      }
    }
  }
}
