package io.capsule.runtime.harness.contain;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The rlimits every contained run gets, cgroup or not (docs/settings.md "How a run is bounded"), as
 * an argv prefix for util-linux's {@code prlimit}, which sets them on itself and execs the rest of
 * the command line, so the sandbox and everything in it inherit them. Pure.
 *
 * <ul>
 *   <li>{@code --core=0}: no core dumps (a dump of a harness holds its credentials and fills the
 *       disk).
 *   <li>{@code --fsize}: the largest file a process may write; past it a write fails with EFBIG or
 *       the writer gets SIGXFSZ.
 *   <li>{@code --nofile}: open files per process (soft = hard, so the run cannot raise it).
 *   <li>{@code --as} under {@link CgroupMode.RlimitOnly} only: the address space per process as a
 *       weak stand-in for the memory limit. Weak because it is per process, not per run, and
 *       because node/V8 and the JVM reserve large virtual ranges they never touch (a node started
 *       under a tight RLIMIT_AS may fail at once), so a cgroup is always preferred.
 * </ul>
 *
 * <p>RLIMIT_NPROC is never set: it counts every process of the real uid on the whole host, and the
 * sandbox's uid maps to the runner's own uid, so it would count (and be exhausted by) the runner's
 * other runs and everything else of that user. The process limit comes from the pids cgroup only.
 */
public final class Rlimits {

  private Rlimits() {}

  /**
   * {@code prlimit --core=0 --fsize=N --nofile=N:N [--as=N] --}: put it before the command to run.
   *
   * @param prlimit util-linux's prlimit ({@code capsule.harness.resources.prlimit})
   */
  public static List<String> prlimitPrefix(Path prlimit, ResourceLimits limits, CgroupMode mode) {
    List<String> argv = new ArrayList<>();
    argv.add(prlimit.toString());
    argv.add("--core=0");
    argv.add("--fsize=" + limits.fileSizeBytes());
    argv.add("--nofile=" + limits.openFiles() + ":" + limits.openFiles());
    if (mode instanceof CgroupMode.RlimitOnly) {
      argv.add("--as=" + limits.memoryBytes());
    }
    argv.add("--");
    return List.copyOf(argv);
  }
}
