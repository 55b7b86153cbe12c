package io.capsule.bench.runtime;

import com.sun.management.OperatingSystemMXBean;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.harness.HarnessLimits;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@link EndToEndComponentBench}'s workload as a plain {@code main} that reports CPU beside wall
 * time: {@code lines} recorded Claude Code lines through a real run with the real {@code
 * claude-code} component, and {@code cat} of the same file into a Java line counter, alternating,
 * after a warm-up. Per round it prints each side's wall ms and the JVM's process CPU ms ({@code
 * OperatingSystemMXBean#getProcessCpuTime}: every thread of this JVM, the runtime's actors, pumps
 * and parse alike; not the child {@code sh}/{@code cat}), their ratios (baseline ÷ run, the issue
 * #15 figure) and the load average. Why: at load 2–8 on two shared cores a JMH single shot's wall
 * time moves by a factor of several, while the CPU the JVM spends on a run moves far less, so the
 * CPU ratio tells two builds apart where the wall ratio cannot.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.capsule.bench.runtime.EndToEndCpu \
 *   [rounds=8] [lines=20000] [engine=wasmtime] [warm-up rounds=100] [batches-in-flight=2]
 * </pre>
 *
 * <p>The last argument sets {@code capsule.run.batches-in-flight} for the run (1 is the behaviour
 * before it existed), so its effect can be measured in one jar.
 */
public final class EndToEndCpu {

  private EndToEndCpu() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    int lines = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    String engine = args.length > 2 ? args[2] : "wasmtime";
    // 100: after 20 warm-up runs the JIT still took a quarter of a run's CPU.
    int warmUp = args.length > 3 ? Integer.parseInt(args[3]) : 100;
    int inFlight =
        args.length > 4 ? Integer.parseInt(args[4]) : HarnessLimits.DEFAULT_BATCHES_IN_FLIGHT;
    OperatingSystemMXBean os = ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);
    Path file = RecordedLines.write(lines, RecordedLines.withoutResults());
    try (DriverLoader loader = DriverLoader.create(engine, DriverLoader.Settings.DEFAULTS);
        BenchRuntime rt =
            BenchRuntime.start(
                "e2e-cpu", l -> l.withHarness(l.harness().withBatchesInFlight(inFlight)))) {
      LoadedDriver claude = loader.load("builtin:claude-code");
      long expected =
          EndToEndComponentBench.texts(claude, Files.readAllLines(file, StandardCharsets.UTF_8));
      CapsuleRef capsule =
          rt.register("claude-component", () -> new ClaudeComponentDriver(claude.newInstance()));
      System.out.printf(
          "EndToEndCpu: %d lines, engine %s, %d batches in flight, %d warm-up + %d rounds; load at"
              + " start %s%n",
          lines, engine, inFlight, warmUp, rounds, load());
      System.out.println(
          "round | cat wall ms | cat cpu ms | run wall ms | run cpu ms | wall ratio | cpu ratio"
              + " | load 1/5/15");
      List<double[]> measured = new ArrayList<>();
      Map<String, Long> split = new TreeMap<>();
      int run = 0;
      for (int r = -warmUp; r < rounds; r++) {
        long[] cat = timed(os, () -> BenchRuntime.catLines(file, lines));
        String task = "e2e-cpu-" + ++run;
        Map<String, Long> threads0 = threadCpu();
        long[] comp = timed(os, () -> rt.runCountingTexts(task, capsule, file, expected));
        if (r >= 0) {
          addSplit(split, threads0, threadCpu(), comp[1]);
        }
        double wallRatio = (double) cat[0] / comp[0];
        double cpuRatio = (double) cat[1] / comp[1];
        System.out.printf(
            "%s | %d | %d | %d | %d | %.3f | %.3f | %s%n",
            r < 0 ? "warm-up" : String.valueOf(r + 1),
            cat[0] / 1_000_000,
            cat[1] / 1_000_000,
            comp[0] / 1_000_000,
            comp[1] / 1_000_000,
            wallRatio,
            cpuRatio,
            load());
        if (r >= 0) {
          measured.add(new double[] {wallRatio, cpuRatio, comp[0], comp[1]});
        }
      }
      System.out.printf(
          "median: wall ratio %.3f, cpu ratio %.3f, run wall %.0f ms, run cpu %.0f ms; load at"
              + " end %s%n",
          median(measured, 0),
          median(measured, 1),
          median(measured, 2) / 1e6,
          median(measured, 3) / 1e6,
          load());
      System.out.println("the run's CPU by thread pool, ms per run (mean of the measured rounds):");
      for (Map.Entry<String, Long> e : split.entrySet()) {
        System.out.printf("  %-55s %6.1f%n", e.getKey(), e.getValue() / 1e6 / rounds);
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /**
   * CPU ns so far of every live Java thread (by id and name) and of the JVM's own threads that Java
   * does not list (the JIT compilers, GC, the VM thread: read from {@code /proc/self/task}, in
   * clock ticks of 10 ms, summed by kind).
   */
  private static Map<String, Long> threadCpu() throws IOException {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Map<String, Long> out = new HashMap<>();
    try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        String comm;
        String[] stat;
        try {
          comm = Files.readString(task.resolve("comm")).trim();
          String line = Files.readString(task.resolve("stat"));
          stat = line.substring(line.lastIndexOf(')') + 2).split(" ");
        } catch (IOException ended) {
          continue;
        }
        String kind =
            comm.startsWith("C1 Comp") || comm.startsWith("C2 Comp")
                ? "0 (JVM) JIT compilers"
                : comm.startsWith("GC ") || comm.startsWith("G1 ")
                    ? "0 (JVM) GC"
                    : comm.equals("VM Thread") ? "0 (JVM) VM thread" : null;
        if (kind != null) {
          // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command's ')'.
          long ticks = Long.parseLong(stat[11]) + Long.parseLong(stat[12]);
          out.merge(kind, ticks * 10_000_000L, Long::sum);
        }
      }
    }
    long self = Thread.currentThread().getId();
    for (ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
      // This thread only waits for the run; its CPU between snapshots is mostly this scan.
      if (info == null || info.getThreadId() == self) {
        continue;
      }
      long cpu = mx.getThreadCpuTime(info.getThreadId());
      if (cpu > 0) {
        // Each thread under its own id and name, so one that ended in between is not miscounted.
        out.put(info.getThreadId() + " " + info.getThreadName(), cpu);
      }
    }
    return out;
  }

  /**
   * Adds the CPU each pool used between two snapshots; what no thread listed accounts for (threads
   * that ended, the 10 ms ticks' rounding) is the rest of the process's CPU.
   */
  private static void addSplit(
      Map<String, Long> split, Map<String, Long> before, Map<String, Long> after, long process) {
    long java = 0;
    for (Map.Entry<String, Long> e : after.entrySet()) {
      long used = e.getValue() - before.getOrDefault(e.getKey(), 0L);
      java += used;
      String pool = e.getKey().substring(e.getKey().indexOf(' ') + 1).replaceAll("\\d+", "N");
      split.merge(pool, used, Long::sum);
    }
    split.merge("(the rest of the process: threads that ended, ...)", process - java, Long::sum);
  }

  /** Something to time that may throw. */
  private interface Work {
    Object run() throws Exception;
  }

  /** {wall ns, the JVM's process CPU ns} spent in {@code work}. */
  private static long[] timed(OperatingSystemMXBean os, Work work) throws Exception {
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    work.run();
    long wall = System.nanoTime() - t0;
    long cpu = os.getProcessCpuTime() - cpu0;
    return new long[] {wall, cpu};
  }

  private static double median(List<double[]> rows, int column) {
    double[] values = rows.stream().mapToDouble(row -> row[column]).sorted().toArray();
    int n = values.length;
    return n == 0
        ? Double.NaN
        : n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  /** The load average as {@code uptime} prints it (1, 5 and 15 minutes). */
  private static String load() throws IOException {
    String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
    return f[0] + " " + f[1] + " " + f[2];
  }
}
