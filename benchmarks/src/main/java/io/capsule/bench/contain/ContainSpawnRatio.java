package io.capsule.bench.contain;

import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.harness.contain.RunSandbox;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@link ContainSpawnBench}'s three sandboxes in one JVM with their rounds interleaved, so that a
 * shared machine's changing load hits each alike: per round, {@code n} spawns of each, and the
 * ratios sealed ÷ namespaces (what the sealed root, user namespace, filter and limits add to the
 * sandbox as it was) and namespaces ÷ none. Prints each round, the medians and the load average.
 *
 * <p>{@code java -cp benchmarks/target/benchmarks.jar io.capsule.bench.contain.ContainSpawnRatio
 * [rounds=10] [spawns=20]}
 */
public final class ContainSpawnRatio {

  private ContainSpawnRatio() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int spawns = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    Path workdir = Files.createTempDirectory("capsule-contain-ratio-");
    try (RunSandbox run =
        RunSandbox.open(
            ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED),
            new HarnessGrants(List.of(), List.of(), false, Path.of("/root")),
            workdir,
            workdir,
            (h, p, r, n) -> {})) {
      List<List<String>> variants =
          List.of(
              List.of("/usr/bin/setsid", "/bin/sh", "-c", "echo first-line"),
              ContainSpawnBench.namespacesOnly(workdir, run),
              run.argv(ContainSpawnBench.HARNESS, Map.of("PATH", "/usr/bin:/bin")));
      for (List<String> v : variants) { // warm up
        for (int i = 0; i < 5; i++) {
          ContainSpawnBench.spawnToFirstLine(v, workdir);
        }
      }
      System.out.println("load before: " + load());
      double[] sealedRatio = new double[rounds];
      double[] nsRatio = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        double[] ms = new double[variants.size()];
        for (int i = 0; i < spawns; i++) {
          for (int v = 0; v < variants.size(); v++) {
            long t0 = System.nanoTime();
            ContainSpawnBench.spawnToFirstLine(variants.get(v), workdir);
            ms[v] += (System.nanoTime() - t0) / 1e6 / spawns;
          }
        }
        sealedRatio[r] = ms[2] / ms[1];
        nsRatio[r] = ms[1] / ms[0];
        System.out.printf(
            Locale.ROOT,
            "round %d: none %.1f ms, namespaces %.1f ms, sealed %.1f ms; sealed/namespaces %.2f,"
                + " namespaces/none %.1f%n",
            r + 1,
            ms[0],
            ms[1],
            ms[2],
            sealedRatio[r],
            nsRatio[r]);
      }
      System.out.printf(
          Locale.ROOT,
          "median sealed/namespaces %.2f (%.2f–%.2f), namespaces/none %.1f; load after: %s%n",
          median(sealedRatio),
          Arrays.stream(sealedRatio).min().orElse(0),
          Arrays.stream(sealedRatio).max().orElse(0),
          median(nsRatio),
          load());
    } finally {
      Files.deleteIfExists(workdir);
    }
  }

  private static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static String load() throws java.io.IOException {
    return new ArrayList<>(List.of(Files.readString(Path.of("/proc/loadavg")).split(" ")))
        .subList(0, 3)
        .toString();
  }
}
