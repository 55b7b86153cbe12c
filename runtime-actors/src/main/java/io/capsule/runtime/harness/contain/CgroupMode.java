package io.capsule.runtime.harness.contain;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.settings.ResourceSettings;
import io.capsule.config.settings.ResourceSettings.Mechanism;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * How this host bounds a run's memory, processes and CPU (docs/settings.md "How a run is bounded"),
 * chosen by {@link #decide} from the {@link CgroupHost} facts. Rules, in order:
 *
 * <ol>
 *   <li>{@code rlimit-only} asked for: rlimits only.
 *   <li>cgroup v2 when its parent directory is writable and has {@code memory} and {@code pids} in
 *       its {@code cgroup.subtree_control} (delegated), unless {@code cgroup-v1} is asked for; CPU
 *       is bounded when {@code cpu} is delegated too.
 *   <li>cgroup v1 when the {@code memory} and {@code pids} hierarchies are writable, unless {@code
 *       cgroup-v2} is asked for; CPU is bounded when the {@code cpu} hierarchy is writable too.
 *   <li>Otherwise rlimits only, saying why each cgroup version did not qualify. An asked-for
 *       version that does not qualify also falls back here (the run still gets rlimits, with
 *       W-CAP-053, rather than not running).
 * </ol>
 */
public sealed interface CgroupMode {

  /** One line for {@code capsule doctor}: the mechanism and why. */
  String describe();

  /** W-CAP-053 when nothing beyond rlimits bounds a run here. */
  default Optional<Diagnostic> warning() {
    return Optional.empty();
  }

  /**
   * Cgroup v2: each run is one directory under {@code parent/capsule}.
   *
   * @param parent the delegated directory the capsule subtree is made in
   * @param cpu whether the cpu controller is delegated too
   */
  record V2(Path parent, boolean cpu) implements CgroupMode {
    @Override
    public String describe() {
      return "cgroup v2: memory, pids"
          + (cpu ? " and cpu" : " (cpu is not delegated: CPU is not bounded)")
          + " in "
          + parent.resolve(RunCgroup.SUBTREE);
    }
  }

  /**
   * Cgroup v1: each run is one directory per controller under {@code <controller parent>/capsule}.
   *
   * @param parents controller → the directory its capsule subtree is made in ({@code memory} and
   *     {@code pids} always, {@code cpu} when writable)
   * @param whyNotV2 why v2 was not used (for {@link #describe})
   */
  record V1(Map<String, Path> parents, String whyNotV2) implements CgroupMode {
    public V1 {
      parents = Map.copyOf(new TreeMap<>(parents));
    }

    @Override
    public String describe() {
      Map<String, Path> sorted = new TreeMap<>(parents);
      List<String> dirs = new ArrayList<>();
      sorted.values().forEach(p -> dirs.add(p.resolve(RunCgroup.SUBTREE).toString()));
      return "cgroup v1: "
          + String.join(", ", sorted.keySet())
          + (sorted.containsKey("cpu") ? "" : " (cpu is not writable: CPU is not bounded)")
          + " in "
          + String.join(", ", dirs)
          + (whyNotV2.isEmpty() ? "" : " (" + whyNotV2 + ")");
    }
  }

  /**
   * No cgroup: only rlimits (file size, open files, address space for memory) bound a run.
   *
   * @param why why no cgroup version qualified, or that rlimit-only was asked for
   */
  record RlimitOnly(String why) implements CgroupMode {
    @Override
    public String describe() {
      return "rlimits only (" + why + ")";
    }

    @Override
    public Optional<Diagnostic> warning() {
      return Optional.of(
          Diagnostic.of(
              Code.W_CAP_053,
              "no cgroup bounds the run's memory, processes and CPU here, only rlimits: " + why));
    }
  }

  /** The mode for {@code settings} on this host (reads {@code cgroup-root} and /proc/self). */
  public static CgroupMode detect(ResourceSettings settings) {
    return decide(
        settings.mechanism(),
        CgroupHost.probe(Path.of(settings.cgroupRoot()), settings.cgroupParent()));
  }

  /** The rules above: pure. */
  static CgroupMode decide(Mechanism asked, CgroupHost host) {
    if (asked == Mechanism.RLIMIT_ONLY) {
      return new RlimitOnly("capsule.harness.resources.mechanism = rlimit-only");
    }
    Optional<String> v2Problem = v2Problem(host);
    Optional<String> v1Problem = v1Problem(host);
    if (asked != Mechanism.CGROUP_V1 && v2Problem.isEmpty()) {
      return new V2(host.v2Parent().orElseThrow(), host.v2Delegated().contains("cpu"));
    }
    if (asked != Mechanism.CGROUP_V2 && v1Problem.isEmpty()) {
      Map<String, Path> parents = new TreeMap<>(host.v1Parents());
      parents.keySet().retainAll(host.v1Writable());
      return new V1(parents, asked == Mechanism.CGROUP_V1 ? "" : v2Problem.orElse(""));
    }
    List<String> why = new ArrayList<>();
    if (asked != Mechanism.CGROUP_V1) {
      why.add(v2Problem.orElse(""));
    }
    if (asked != Mechanism.CGROUP_V2) {
      why.add(v1Problem.orElse(""));
    }
    String prefix = asked == Mechanism.AUTO ? "" : "mechanism = " + asked.configName() + " but ";
    return new RlimitOnly(prefix + String.join("; ", why));
  }

  private static Optional<String> v2Problem(CgroupHost host) {
    if (host.v2Parent().isEmpty()) {
      return Optional.of("no cgroup v2 hierarchy is mounted");
    }
    Path parent = host.v2Parent().get();
    if (!host.v2Writable()) {
      return Optional.of("cgroup v2 at " + parent + " is not writable by this user");
    }
    List<String> missing = new ArrayList<>();
    for (String controller : List.of("memory", "pids")) {
      if (!host.v2Delegated().contains(controller)) {
        missing.add(controller);
      }
    }
    if (!missing.isEmpty()) {
      return Optional.of(
          "cgroup v2 at "
              + parent
              + " does not delegate "
              + String.join(" and ", missing)
              + " (not in its cgroup.subtree_control)");
    }
    return Optional.empty();
  }

  private static Optional<String> v1Problem(CgroupHost host) {
    List<String> missing = new ArrayList<>();
    List<String> readOnly = new ArrayList<>();
    for (String controller : List.of("memory", "pids")) {
      if (!host.v1Parents().containsKey(controller)) {
        missing.add(controller);
      } else if (!host.v1Writable().contains(controller)) {
        readOnly.add(host.v1Parents().get(controller).toString());
      }
    }
    if (!missing.isEmpty()) {
      return Optional.of("no cgroup v1 " + String.join(" and ", missing) + " hierarchy");
    }
    if (!readOnly.isEmpty()) {
      return Optional.of("cgroup v1 " + String.join(" and ", readOnly) + " not writable");
    }
    return Optional.empty();
  }
}
