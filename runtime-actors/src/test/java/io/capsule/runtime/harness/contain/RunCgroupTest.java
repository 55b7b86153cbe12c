package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.settings.ResourceSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Real cgroups on this host (v1 on this machine kind, v2 where the host delegates it): a memory hog
 * is OOM-killed, a fork bomb stops at the pids limit, the kernel's counters say so, and nothing is
 * left after {@link RunCgroup#close()}. Making cgroups needs root (or delegation): the tests skip
 * only when not root and CI is unset; on CI they always run.
 */
class RunCgroupTest {

  static final ResourceLimits LIMITS =
      new ResourceLimits(64L << 20, 32, 0.5, 1L << 30, 4096, List.of());

  private CgroupMode mode;
  private final List<Path> subtreesMade = new ArrayList<>();
  private final List<RunCgroup> cgroups = new ArrayList<>();
  private final List<Process> processes = new ArrayList<>();
  private final List<Path> extraDirs = new ArrayList<>();

  @BeforeEach
  void needsCgroups() throws IOException {
    boolean root = Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
    Assumptions.assumeTrue(
        root || System.getenv("CI") != null,
        "making cgroups needs root or a delegated cgroup v2; not root and CI is unset");
    mode = CgroupMode.detect(ResourceSettings.DEFAULTS);
    assertFalse(
        mode instanceof CgroupMode.RlimitOnly,
        "as root a cgroup must be usable: " + mode.describe());
    for (Path parent : parents()) {
      Path subtree = parent.resolve(RunCgroup.SUBTREE);
      if (!Files.exists(subtree)) {
        subtreesMade.add(subtree);
      }
    }
  }

  @AfterEach
  void removeEverything() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    for (RunCgroup c : cgroups) {
      c.close();
    }
    for (Path dir : extraDirs) {
      Files.deleteIfExists(dir);
    }
    for (Path subtree : subtreesMade) {
      Files.deleteIfExists(subtree);
    }
  }

  @Test
  void theLimitsAreWrittenWhereTheKernelReadsThem() throws IOException {
    RunCgroup cg = create("limits");

    if (mode instanceof CgroupMode.V2 v2) {
      Path dir = cg.dirs().get(0);
      assertEquals("67108864", read(dir, "memory.max"));
      assertEquals("32", read(dir, "pids.max"));
      if (v2.cpu()) {
        assertEquals("50000 100000", read(dir, "cpu.max"));
      }
    } else {
      for (Path dir : cg.dirs()) {
        String controller = dir.getParent().getParent().toString();
        if (Files.exists(dir.resolve("memory.limit_in_bytes"))) {
          assertEquals("67108864", read(dir, "memory.limit_in_bytes"));
          if (Files.exists(dir.resolve("memory.memsw.limit_in_bytes"))) {
            assertEquals("67108864", read(dir, "memory.memsw.limit_in_bytes"), "no swap");
          }
        } else if (Files.exists(dir.resolve("pids.max"))) {
          assertEquals("32", read(dir, "pids.max"));
        } else {
          assertEquals("50000", read(dir, "cpu.cfs_quota_us"), controller);
          assertEquals("100000", read(dir, "cpu.cfs_period_us"));
        }
      }
      assertTrue(cg.dirs().size() >= 2, "memory and pids at least: " + cg.dirs());
    }
    assertEquals(Optional.empty(), cg.breach(), "nothing ran yet");
  }

  @Test
  void aMemoryHogIsOomKilledAndTheRunsBreachIsMemory() throws Exception {
    RunCgroup cg = create("hog");

    Process hog = run(cg, "exec /usr/bin/awk 'BEGIN { s = \"x\"; while (1) s = s s }'");

    assertTrue(hog.waitFor(60, TimeUnit.SECONDS), "the hog is killed, not left growing");
    assertEquals(128 + 9, hog.exitValue(), "SIGKILL from the OOM killer");
    assertEquals(Optional.of(Breach.MEMORY), cg.breach());
    closeAndAssertNothingLeft(cg, List.of());
  }

  @Test
  void aForkBombCannotPassTheProcessLimit() throws Exception {
    RunCgroup cg = create("forkbomb");

    Process bomb =
        run(
            cg,
            "i=0; while [ $i -lt 200 ]; do /bin/sleep 600 >/dev/null 2>&1 & i=$((i+1)); done; echo passed");

    assertTrue(bomb.waitFor(60, TimeUnit.SECONDS), "the shell gives up at a refused fork");
    String out = new String(bomb.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertNotEquals(0, bomb.exitValue(), out);
    assertFalse(out.contains("passed"), out);
    List<Long> left = pidsIn(cg);
    assertTrue(left.size() <= 32 && left.size() >= 20, "sleeps left in the run: " + left.size());
    assertEquals(Optional.of(Breach.PROCESSES), cg.breach());
    for (Path dir : cg.dirs()) {
      if (Files.exists(dir.resolve("pids.peak"))) {
        assertTrue(Long.parseLong(read(dir, "pids.peak")) <= 32, "peak " + read(dir, "pids.peak"));
      }
    }
    closeAndAssertNothingLeft(cg, left);
  }

  @Test
  void closeKillsWhatIsLeftRemovesEveryDirAndIsIdempotent() throws Exception {
    RunCgroup cg = create("close");

    Process p = run(cg, "/bin/sleep 600 & echo in; exec /bin/sleep 600");
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    assertEquals("in", CompletableFuture.supplyAsync(() -> line(out)).get(30, TimeUnit.SECONDS));
    List<Long> inside = pidsIn(cg);
    assertEquals(2, inside.size(), "the shell (now sleep) and its background sleep");

    closeAndAssertNothingLeft(cg, inside);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    assertEquals(128 + 9, p.exitValue());
    cg.close();
    assertEquals(Optional.empty(), cg.breach(), "a closed cgroup has no counters left");
  }

  @Test
  void aLeftoverOfADeadJvmIsSweptAndALiveOnesIsNot() throws Exception {
    create("first");
    Process gone = new ProcessBuilder("/bin/true").start();
    assertTrue(gone.waitFor(10, TimeUnit.SECONDS));
    long me = ProcessHandle.current().pid();
    long start = RunCgroupName.startTime(me).orElseThrow();
    List<Path> dead = new ArrayList<>();
    List<Path> live = new ArrayList<>();
    for (Path parent : parents()) {
      Path subtree = parent.resolve(RunCgroup.SUBTREE);
      dead.add(Files.createDirectory(subtree.resolve("run-" + gone.pid() + "-1-1-old")));
      Path mine = Files.createDirectory(subtree.resolve("run-" + me + "-" + start + "-0-live"));
      live.add(mine);
      extraDirs.add(mine);
    }

    create("second");

    for (Path d : dead) {
      assertFalse(Files.exists(d), "swept: " + d);
    }
    for (Path d : live) {
      assertTrue(Files.exists(d), "a live JVM's run is never swept: " + d);
    }
  }

  @Test
  void aLaunchThatCannotEnterItsCgroupDoesNotStart() throws Exception {
    RunCgroup cg = create("gone");
    String prelude = cg.shellPrelude();
    cg.close();

    Process p =
        new ProcessBuilder("/bin/sh", "-c", prelude + "echo started")
            .redirectErrorStream(true)
            .start();
    processes.add(p);

    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(RunCgroup.ENTER_FAILED_EXIT, p.exitValue());
    assertFalse(
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).contains("started"));
  }

  private RunCgroup create(String runId) throws IOException {
    RunCgroup cg = RunCgroup.create(mode, runId, LIMITS);
    cgroups.add(cg);
    return cg;
  }

  /** The launch prelude: enter every hierarchy, then the rest. */
  private Process run(RunCgroup cg, String then) throws IOException {
    Process p =
        new ProcessBuilder("/bin/sh", "-c", cg.shellPrelude() + then)
            .redirectErrorStream(true)
            .start();
    processes.add(p);
    return p;
  }

  private void closeAndAssertNothingLeft(RunCgroup cg, List<Long> pids) throws IOException {
    List<Path> dirs = cg.dirs();
    cg.close();
    for (Path dir : dirs) {
      assertFalse(Files.exists(dir), "removed: " + dir);
    }
    for (long pid : pids) {
      assertFalse(running(pid), "killed: " + pid);
    }
  }

  private List<Path> parents() {
    if (mode instanceof CgroupMode.V2 v2) {
      return List.of(v2.parent());
    }
    return List.copyOf(((CgroupMode.V1) mode).parents().values());
  }

  private static List<Long> pidsIn(RunCgroup cg) throws IOException {
    return CgroupFiles.pids(Files.readString(cg.procsFiles().get(0)));
  }

  /** Alive and not a zombie waiting for a parent that may never reap it. */
  private static boolean running(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      char state = stat.substring(stat.lastIndexOf(')') + 2).charAt(0);
      return state != 'Z' && state != 'X';
    } catch (IOException gone) {
      return false;
    }
  }

  private static String read(Path dir, String file) throws IOException {
    return Files.readString(dir.resolve(file)).strip();
  }

  private static String line(BufferedReader in) {
    try {
      return in.readLine();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
