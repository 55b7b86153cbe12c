package io.capsule.config.settings;

import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code capsule.harness.resources.*}: the operator's bounds on what one run may use
 * (docs/settings.md "capsule.harness.resources"). For each limit a default, applied when the
 * manifest states none, and a ceiling the manifest cannot pass. See {@code reference.conf} for each
 * value's reason.
 *
 * @param mechanism how limits are enforced beyond rlimits
 * @param cgroupRoot where the cgroup file systems are mounted
 * @param cgroupParent the cgroup under which the capsule subtree is made, relative to a hierarchy's
 *     root; empty means the hierarchy root (v2) or the runner's own cgroup (v1)
 * @param prlimit util-linux's prlimit binary, which applies the rlimits
 * @param memory default memory of a run, bytes
 * @param memoryMax ceiling of a run's memory, bytes
 * @param processes default tasks alive at once in a run
 * @param processesMax ceiling of tasks
 * @param cpu default CPU share in cores; 0 means every core of the host (capped by cpuMax)
 * @param cpuMax ceiling of the CPU share in cores; 0 means every core of the host
 * @param fileSize default largest file a process may write, bytes
 * @param fileSizeMax ceiling of that, bytes
 * @param openFiles default open files per process
 * @param openFilesMax ceiling of open files per process
 */
public record ResourceSettings(
    Mechanism mechanism,
    String cgroupRoot,
    String cgroupParent,
    String prlimit,
    long memory,
    long memoryMax,
    int processes,
    int processesMax,
    double cpu,
    double cpuMax,
    long fileSize,
    long fileSizeMax,
    int openFiles,
    int openFilesMax) {

  /** The shipped values of reference.conf, for code that builds settings without a Config. */
  public static final ResourceSettings DEFAULTS =
      new ResourceSettings(
          Mechanism.AUTO,
          "/sys/fs/cgroup",
          "",
          "/usr/bin/prlimit",
          4L << 30,
          16L << 30,
          512,
          4096,
          0,
          0,
          1L << 30,
          8L << 30,
          4096,
          65536);

  /** The values of {@code capsule.harness.resources.mechanism}. */
  public enum Mechanism {
    /** cgroup v2 when delegated, else cgroup v1 when writable, else rlimits only. */
    AUTO,
    /** cgroup v2 only (rlimits only, with W-CAP-053, when it is not usable). */
    CGROUP_V2,
    /** cgroup v1 only (rlimits only, with W-CAP-053, when it is not usable). */
    CGROUP_V1,
    /** No cgroup: rlimits only (W-CAP-053 on every run). */
    RLIMIT_ONLY;

    /** The spelling in the setting. */
    public String configName() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    static Optional<Mechanism> byName(String name) {
      return Arrays.stream(values()).filter(m -> m.configName().equals(name)).findFirst();
    }
  }

  public ResourceSettings {
    Objects.requireNonNull(mechanism, "mechanism");
    Objects.requireNonNull(cgroupRoot, "cgroupRoot");
    Objects.requireNonNull(cgroupParent, "cgroupParent");
    Objects.requireNonNull(prlimit, "prlimit");
  }

  static ResourceSettings read(SettingsReader r) {
    String p = "capsule.harness.resources.";
    String name = r.optionalText(p + "mechanism").orElse("");
    Optional<Mechanism> mechanism = Mechanism.byName(name);
    if (mechanism.isEmpty()) {
      r.problem(
          p + "mechanism",
          "must be auto, cgroup-v2, cgroup-v1 or rlimit-only (was '" + name + "')");
    }
    String parent = r.optionalText(p + "cgroup-parent").orElse("");
    if (parent.startsWith("/") || parent.contains("..")) {
      r.problem(p + "cgroup-parent", "must be relative to the hierarchy's root, without '..'");
    }
    ResourceSettings s =
        new ResourceSettings(
            mechanism.orElse(Mechanism.AUTO),
            r.text(p + "cgroup-root"),
            parent,
            r.text(p + "prlimit"),
            r.bytes(p + "memory", 16L << 20, Long.MAX_VALUE),
            r.bytes(p + "memory-max", 16L << 20, Long.MAX_VALUE),
            r.count(p + "processes", 4, 4_194_304),
            r.count(p + "processes-max", 4, 4_194_304),
            r.cores(p + "cpu"),
            r.cores(p + "cpu-max"),
            r.bytes(p + "file-size", 1L << 20, Long.MAX_VALUE),
            r.bytes(p + "file-size-max", 1L << 20, Long.MAX_VALUE),
            r.count(p + "open-files", 64, 1_048_576),
            r.count(p + "open-files-max", 64, 1_048_576));
    notAbove(r, p + "memory", s.memory, s.memoryMax);
    notAbove(r, p + "processes", s.processes, s.processesMax);
    notAbove(r, p + "file-size", s.fileSize, s.fileSizeMax);
    notAbove(r, p + "open-files", s.openFiles, s.openFilesMax);
    if (s.cpuMax > 0 && s.cpu > s.cpuMax) {
      r.problem(p + "cpu", "must not be above cpu-max (" + s.cpuMax + "), got " + s.cpu);
    }
    return s;
  }

  private static void notAbove(SettingsReader r, String key, long value, long max) {
    if (value > max) {
      r.problem(key, "must not be above its ceiling " + key + "-max (" + max + "), got " + value);
    }
  }

  /**
   * The default CPU share in cores on a host with {@code hostCores} cores: {@code cpu}, or when it
   * is 0 every core, never above the ceiling.
   */
  public double cpuOn(int hostCores) {
    return Math.min(cpu == 0 ? hostCores : cpu, cpuMaxOn(hostCores));
  }

  /** The CPU ceiling in cores on a host with {@code hostCores} cores. */
  public double cpuMaxOn(int hostCores) {
    return cpuMax == 0 ? hostCores : cpuMax;
  }
}
