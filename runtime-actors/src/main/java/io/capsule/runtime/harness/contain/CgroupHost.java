package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What this host offers for bounding a run with cgroups (docs/settings.md "How a run is bounded"):
 * the facts {@link CgroupMode#decide} chooses from. {@link #probe} reads them (file reads and
 * access checks only, no writes); everything else here is pure.
 *
 * @param v2Parent where a v2 capsule subtree would be made (a v2 hierarchy's directory), if any
 * @param v2Writable whether that directory is writable by this process
 * @param v2Delegated the controllers enabled in its {@code cgroup.subtree_control}
 * @param v1Parents per v1 controller ({@code memory}, {@code pids}, {@code cpu}) mounted here, the
 *     directory a v1 capsule subtree would be made in
 * @param v1Writable the v1 controllers whose directory is writable by this process
 */
public record CgroupHost(
    Optional<Path> v2Parent,
    boolean v2Writable,
    Set<String> v2Delegated,
    Map<String, Path> v1Parents,
    Set<String> v1Writable) {

  /** The v1 controllers a run uses; memory and pids are required, cpu is used when present. */
  static final List<String> V1_CONTROLLERS = List.of("memory", "pids", "cpu");

  public CgroupHost {
    v2Delegated = Set.copyOf(v2Delegated);
    v1Parents = Map.copyOf(v1Parents);
    v1Writable = Set.copyOf(v1Writable);
  }

  /**
   * Reads the host's cgroup facts.
   *
   * @param root where the cgroup file systems are mounted ({@code /sys/fs/cgroup})
   * @param parent {@code capsule.harness.resources.cgroup-parent}: relative to a hierarchy's root;
   *     empty for the v2 root or, on v1, this process's own cgroup
   * @param selfCgroup the text of {@code /proc/self/cgroup}
   */
  public static CgroupHost probe(Path root, String parent, String selfCgroup) {
    Optional<Path> v2Mount = v2Mount(root);
    Optional<Path> v2Parent = v2Mount.map(m -> parent.isEmpty() ? m : m.resolve(parent));
    boolean v2Writable = v2Parent.map(CgroupHost::writableDir).orElse(false);
    Set<String> delegated =
        v2Parent
            .flatMap(p -> read(p.resolve("cgroup.subtree_control")))
            .map(CgroupHost::words)
            .orElse(Set.of());
    Map<String, String> own = selfCgroupV1(selfCgroup);
    Map<String, Path> v1Parents = new LinkedHashMap<>();
    Set<String> v1Writable = new HashSet<>();
    for (String controller : V1_CONTROLLERS) {
      Path mount = root.resolve(controller);
      if (!Files.isRegularFile(mount.resolve("cgroup.procs"))
          || Files.exists(mount.resolve("cgroup.controllers"))) {
        continue;
      }
      String relative = parent.isEmpty() ? own.getOrDefault(controller, "/") : parent;
      Path dir = mount.resolve(relative.replaceFirst("^/+", ""));
      v1Parents.put(controller, dir);
      if (writableDir(dir)) {
        v1Writable.add(controller);
      }
    }
    return new CgroupHost(v2Parent, v2Writable, delegated, v1Parents, v1Writable);
  }

  /** Probes with the real {@code /proc/self/cgroup}. */
  public static CgroupHost probe(Path root, String parent) {
    return probe(root, parent, read(Path.of("/proc/self/cgroup")).orElse(""));
  }

  /**
   * The v1 part of {@code /proc/self/cgroup}: each controller of a {@code id:controllers:path} line
   * to its path ({@code 4:memory:/a/b} → memory → /a/b; {@code 1:cpu,cpuacct:/} gives both). The v2
   * line ({@code 0::/…}) and named hierarchies ({@code name=systemd}) are left out.
   */
  static Map<String, String> selfCgroupV1(String text) {
    Map<String, String> paths = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] parts = line.split(":", 3);
      if (parts.length < 3 || parts[1].isEmpty()) {
        continue;
      }
      for (String controller : parts[1].split(",")) {
        if (!controller.startsWith("name=")) {
          paths.put(controller, parts[2].strip());
        }
      }
    }
    return paths;
  }

  /** A v2 hierarchy at the root (pure v2) or at {@code root/unified} (hybrid), if any. */
  private static Optional<Path> v2Mount(Path root) {
    for (Path candidate : List.of(root, root.resolve("unified"))) {
      if (Files.isRegularFile(candidate.resolve("cgroup.controllers"))) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  private static boolean writableDir(Path dir) {
    return Files.isDirectory(dir) && Files.isWritable(dir);
  }

  private static Set<String> words(String text) {
    Set<String> words = new HashSet<>(Arrays.asList(text.strip().split("\\s+")));
    words.remove("");
    return words;
  }

  private static Optional<String> read(Path file) {
    try {
      return Optional.of(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
