package io.capsule.runtime.harness.contain;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.ByteSize;
import io.capsule.config.manifest.Capabilities;
import io.capsule.config.settings.ResourceSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * The limits one run gets (docs/settings.md "capsule.harness.resources"): what the manifest asks
 * for, else the operator's default, never above the operator's ceiling. Pure.
 *
 * <p>Rules, per limit: (1) the manifest's value when it states one, else the operator's default;
 * (2) a manifest value above the ceiling is cut to the ceiling with one {@code W-CAP-054} naming
 * the key (a capsule written for a larger runner still runs; the operator's word holds either way);
 * (3) a CPU default or ceiling of 0 means every core of the host.
 *
 * @param memoryBytes memory of the whole run, bytes
 * @param processes tasks (processes and threads) alive at once in the run
 * @param cpuCores CPU time in cores
 * @param fileSizeBytes largest file a process may write, bytes
 * @param openFiles open file descriptors per process
 * @param warnings one W-CAP-054 per limit cut to its ceiling, in key order
 */
public record ResourceLimits(
    long memoryBytes,
    int processes,
    double cpuCores,
    long fileSizeBytes,
    int openFiles,
    List<Diagnostic> warnings) {

  /** The CFS period the CPU share is expressed in: the kernel's default, 100 ms. */
  public static final long CPU_PERIOD_MICROS = 100_000;

  public ResourceLimits {
    warnings = List.copyOf(warnings);
  }

  /**
   * The effective limits.
   *
   * @param asked the manifest's {@code capabilities.resources}
   * @param settings the operator's {@code capsule.harness.resources}
   * @param hostCores the host's cores ({@code Runtime.availableProcessors()})
   */
  public static ResourceLimits effective(
      Capabilities.Resources asked, ResourceSettings settings, int hostCores) {
    List<Diagnostic> warnings = new ArrayList<>();
    long memory =
        bytes("memory", asked.memoryBytes(), settings.memory(), settings.memoryMax(), warnings);
    int processes =
        (int)
            count(
                "processes",
                asked.processes().isPresent()
                    ? OptionalLong.of(asked.processes().getAsInt())
                    : OptionalLong.empty(),
                settings.processes(),
                settings.processesMax(),
                warnings);
    double cpu = cores(asked.cpuCores(), settings, hostCores, warnings);
    long fileSize =
        bytes(
            "file_size",
            asked.fileSizeBytes(),
            settings.fileSize(),
            settings.fileSizeMax(),
            warnings);
    int openFiles =
        (int)
            count(
                "open_files",
                asked.openFiles().isPresent()
                    ? OptionalLong.of(asked.openFiles().getAsInt())
                    : OptionalLong.empty(),
                settings.openFiles(),
                settings.openFilesMax(),
                warnings);
    return new ResourceLimits(memory, processes, cpu, fileSize, openFiles, warnings);
  }

  /** {@code cpuCores} as a CFS quota over {@link #CPU_PERIOD_MICROS}, at least the 1 ms floor. */
  public long cpuQuotaMicros() {
    return Math.max(1000, Math.round(cpuCores * CPU_PERIOD_MICROS));
  }

  private static long bytes(
      String key, OptionalLong asked, long dflt, long max, List<Diagnostic> warnings) {
    long value = asked.orElse(dflt);
    if (value > max) {
      warnings.add(cut(key, ByteSize.show(value), ByteSize.show(max)));
      return max;
    }
    return value;
  }

  private static long count(
      String key, OptionalLong asked, long dflt, long max, List<Diagnostic> warnings) {
    long value = asked.orElse(dflt);
    if (value > max) {
      warnings.add(cut(key, Long.toString(value), Long.toString(max)));
      return max;
    }
    return value;
  }

  private static double cores(
      OptionalDouble asked, ResourceSettings settings, int hostCores, List<Diagnostic> warnings) {
    double max = settings.cpuMaxOn(hostCores);
    if (asked.isEmpty()) {
      return settings.cpuOn(hostCores);
    }
    if (asked.getAsDouble() > max) {
      warnings.add(cut("cpu", asked.getAsDouble() + " cores", max + " cores"));
      return max;
    }
    return asked.getAsDouble();
  }

  private static Diagnostic cut(String key, String asked, String ceiling) {
    String setting = "capsule.harness.resources." + key.replace('_', '-') + "-max";
    return Diagnostic.of(
            Code.W_CAP_054,
            "capabilities.resources."
                + key
                + " asked for "
                + asked
                + ", above the operator's ceiling "
                + setting
                + " = "
                + ceiling
                + "; the run gets "
                + ceiling)
        .with("key", "capabilities.resources." + key)
        .with("ceiling", setting);
  }
}
