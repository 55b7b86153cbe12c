package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One run's cgroup (docs/settings.md "How a run is bounded"): made with the run's limits before the
 * sandbox starts, entered by the launch's shell prelude ({@code echo $$ > F} for each of {@link
 * #procsFiles()}, then exec), read for breaches, and removed with every process still in it when
 * the run ends. Under {@link CgroupMode.RlimitOnly} it holds nothing: no files to enter, never a
 * breach, nothing to remove.
 *
 * <p>Blocking file I/O (and, in {@link #close()}, bounded waits for killed processes to leave):
 * call on the blocking dispatcher, never an actor thread. {@link #breach()} may be called from any
 * thread; {@link #close()} is idempotent and safe to call twice from different threads.
 */
public final class RunCgroup implements AutoCloseable {

  /** The directory, under a parent, that holds every run cgroup this runtime makes. */
  public static final String SUBTREE = "capsule";

  /**
   * Bound on emptying and removing the run's cgroups: a SIGKILLed process leaves in milliseconds; 5
   * s covers a loaded machine and a fork bomb re-spawning between passes.
   */
  static final Duration CLOSE_BOUND = Duration.ofSeconds(5);

  /** Pause between passes while processes exit (the kernel needs them reaped to rmdir). */
  private static final long PASS_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /**
   * What the launch's shell exits with when it cannot enter the run's cgroup: the run must never
   * start outside it. 125, as {@code env} and {@code chroot} use for "the wrapper itself failed",
   * so it is not mistaken for the harness's own exit.
   */
  public static final int ENTER_FAILED_EXIT = 125;

  private static final AtomicLong SEQ = new AtomicLong();

  private final CgroupMode mode;
  private final List<Path> dirs;
  private final AtomicBoolean closed = new AtomicBoolean();

  private RunCgroup(CgroupMode mode, List<Path> dirs) {
    this.mode = mode;
    this.dirs = List.copyOf(dirs);
  }

  /**
   * Makes the run's cgroup(s) with {@code limits}, after sweeping empty leftovers of JVMs that died
   * without closing theirs. On failure nothing made is left behind.
   *
   * @throws IOException when the cgroup cannot be made or limited (the mode said it could)
   */
  public static RunCgroup create(CgroupMode mode, String runId, ResourceLimits limits)
      throws IOException {
    if (mode instanceof CgroupMode.RlimitOnly) {
      return new RunCgroup(mode, List.of());
    }
    long pid = ProcessHandle.current().pid();
    String name =
        RunCgroupName.of(pid, RunCgroupName.startTime(pid).orElse(0), SEQ.incrementAndGet(), runId)
            .dir();
    List<Path> made = new ArrayList<>();
    try {
      if (mode instanceof CgroupMode.V2 v2) {
        Path subtree = subtree(v2.parent());
        // Controllers must be enabled in the capsule subtree for its children to have them; the
        // subtree holds no process, so the kernel allows it (docs/settings.md).
        CgroupFiles.write(
            subtree.resolve("cgroup.subtree_control"),
            v2.cpu() ? "+memory +pids +cpu" : "+memory +pids");
        Path dir = Files.createDirectory(subtree.resolve(name));
        made.add(dir);
        CgroupFiles.write(dir.resolve("memory.max"), Long.toString(limits.memoryBytes()));
        CgroupFiles.writeIfPresent(dir.resolve("memory.swap.max"), "0");
        CgroupFiles.write(dir.resolve("pids.max"), Integer.toString(limits.processes()));
        if (v2.cpu()) {
          CgroupFiles.write(
              dir.resolve("cpu.max"),
              limits.cpuQuotaMicros() + " " + ResourceLimits.CPU_PERIOD_MICROS);
        }
      } else if (mode instanceof CgroupMode.V1 v1) {
        for (Map.Entry<String, Path> e : new TreeMap<>(v1.parents()).entrySet()) {
          Path dir = Files.createDirectory(subtree(e.getValue()).resolve(name));
          made.add(dir);
          limitV1(e.getKey(), dir, limits);
        }
      }
    } catch (IOException | RuntimeException e) {
      try {
        new RunCgroup(mode, made).close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return new RunCgroup(mode, made);
  }

  private static void limitV1(String controller, Path dir, ResourceLimits limits)
      throws IOException {
    switch (controller) {
      case "memory" -> {
        // memsw (memory + swap) must not be below the memory limit: set memory first. Equal
        // values leave no swap to hide in, where the kernel accounts swap at all.
        CgroupFiles.write(
            dir.resolve("memory.limit_in_bytes"), Long.toString(limits.memoryBytes()));
        CgroupFiles.writeIfPresent(
            dir.resolve("memory.memsw.limit_in_bytes"), Long.toString(limits.memoryBytes()));
      }
      case "pids" ->
          CgroupFiles.write(dir.resolve("pids.max"), Integer.toString(limits.processes()));
      case "cpu" -> {
        CgroupFiles.write(
            dir.resolve("cpu.cfs_period_us"), Long.toString(ResourceLimits.CPU_PERIOD_MICROS));
        CgroupFiles.write(dir.resolve("cpu.cfs_quota_us"), Long.toString(limits.cpuQuotaMicros()));
      }
      default -> throw new IllegalArgumentException("no v1 controller " + controller);
    }
  }

  /** The capsule subtree under {@code parent}, made if missing, swept of dead JVMs' leftovers. */
  private static Path subtree(Path parent) throws IOException {
    Path subtree = parent.resolve(SUBTREE);
    try {
      Files.createDirectory(subtree);
    } catch (FileAlreadyExistsException exists) {
      sweep(subtree);
    }
    return subtree;
  }

  /**
   * Removes run cgroups in {@code subtree} whose JVM is gone and that are empty (rmdir refuses a
   * cgroup with a process in it, so a live run is never touched, whoever owns it).
   */
  static void sweep(Path subtree) {
    try (DirectoryStream<Path> runs = Files.newDirectoryStream(subtree, "run-*")) {
      for (Path run : runs) {
        Optional<RunCgroupName> name = RunCgroupName.parse(run.getFileName().toString());
        if (name.isPresent() && name.get().ownerGone(RunCgroupName.startTime(name.get().pid()))) {
          try {
            Files.delete(run);
          } catch (IOException busyOrGone) {
            // Still holds a process (it outlived its runner) or another sweep took it: leave it.
          }
        }
      }
    } catch (IOException unreadable) {
      // A sweep is housekeeping: a failure to list must not stop a run from starting.
    }
  }

  /** The files the launch prelude writes its pid into ({@code echo $$ > F}), one per hierarchy. */
  public List<Path> procsFiles() {
    return dirs.stream().map(d -> d.resolve("cgroup.procs")).toList();
  }

  /**
   * The start of the launch's {@code /bin/sh -c} script: moves the shell into each of {@link
   * #procsFiles()} and exits {@link #ENTER_FAILED_EXIT} if any write fails; append {@code exec
   * prlimit … -- bwrap …}. Empty under rlimits only.
   */
  public String shellPrelude() {
    StringBuilder sh = new StringBuilder();
    for (Path f : procsFiles()) {
      sh.append("echo $$ > '")
          .append(f.toString().replace("'", "'\\''"))
          .append("' || exit ")
          .append(ENTER_FAILED_EXIT)
          .append("; ");
    }
    return sh.toString();
  }

  /** The run's cgroup directories (empty under rlimits only). */
  public List<Path> dirs() {
    return dirs;
  }

  public CgroupMode mode() {
    return mode;
  }

  /**
   * The limit the run went past, from the kernel's counters: memory first (an OOM kill is the
   * graver event, and a memory hog that forks may also touch the pids limit), then processes.
   */
  public Optional<Breach> breach() throws IOException {
    for (Path dir : dirs) {
      if (mode instanceof CgroupMode.V2) {
        if (count(dir, "memory.events", "oom_kill") > 0) {
          return Optional.of(Breach.MEMORY);
        }
      } else if (Files.exists(dir.resolve("memory.oom_control"))) {
        String oom = CgroupFiles.readOrEmpty(dir.resolve("memory.oom_control"));
        // oom_kill is there since Linux 4.13; before, a failed charge at the limit is the sign.
        long kills =
            CgroupFiles.flatKeyed(oom, "oom_kill")
                .orElse(Math.min(1, count(dir, "memory.failcnt")));
        if (kills > 0) {
          return Optional.of(Breach.MEMORY);
        }
      }
    }
    for (Path dir : dirs) {
      if (count(dir, "pids.events", "max") > 0) {
        return Optional.of(Breach.PROCESSES);
      }
    }
    return Optional.empty();
  }

  private static long count(Path dir, String file, String key) throws IOException {
    return CgroupFiles.flatKeyed(CgroupFiles.readOrEmpty(dir.resolve(file)), key).orElse(0);
  }

  private static long count(Path dir, String file) throws IOException {
    String text = CgroupFiles.readOrEmpty(dir.resolve(file)).strip();
    return text.isEmpty() ? 0 : Long.parseLong(text);
  }

  /**
   * Kills every process left in the run's cgroups ({@code cgroup.kill} on v2 since Linux 5.14, else
   * SIGKILL to each listed pid, pass after pass until none is left) and removes the directories,
   * within {@link #CLOSE_BOUND}. Idempotent.
   *
   * @throws IOException when a directory is still there after the bound (named in the message)
   */
  @Override
  public void close() throws IOException {
    if (!closed.compareAndSet(false, true) || dirs.isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + CLOSE_BOUND.toNanos();
    for (Path dir : dirs) {
      CgroupFiles.writeIfPresent(dir.resolve("cgroup.kill"), "1");
    }
    List<Path> left = new ArrayList<>(dirs);
    while (!left.isEmpty()) {
      for (Path dir : List.copyOf(left)) {
        if (killAll(dir) == 0 && remove(dir)) {
          left.remove(dir);
        }
      }
      if (left.isEmpty() || System.nanoTime() > deadline) {
        break;
      }
      LockSupport.parkNanos(PASS_NANOS);
    }
    if (!left.isEmpty()) {
      throw new IOException(
          "run cgroup(s) "
              + left
              + " still hold processes or could not be removed after "
              + CLOSE_BOUND.toSeconds()
              + " s");
    }
  }

  /** SIGKILLs every process listed; the number listed (0 when the cgroup is empty or gone). */
  private static int killAll(Path dir) throws IOException {
    List<Long> pids;
    try {
      pids = CgroupFiles.pids(Files.readString(dir.resolve("cgroup.procs")));
    } catch (NoSuchFileException gone) {
      return 0;
    }
    for (long pid : pids) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
    return pids.size();
  }

  /** rmdir; true when the directory is gone (removed now or before). */
  private static boolean remove(Path dir) {
    try {
      Files.deleteIfExists(dir);
      return true;
    } catch (IOException busy) {
      return false;
    }
  }
}
