package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The prlimit prefix: its argv, and the limits it really sets on a real child. */
class RlimitsTest {

  static final Path PRLIMIT = Path.of("/usr/bin/prlimit");

  static final ResourceLimits LIMITS =
      new ResourceLimits(256L << 20, 64, 1.0, 1L << 20, 128, List.of());

  @TempDir Path dir;

  @Test
  void underACgroupTheMemoryIsLeftToTheCgroup() {
    assertEquals(
        List.of("/usr/bin/prlimit", "--core=0", "--fsize=1048576", "--nofile=128:128", "--"),
        Rlimits.prlimitPrefix(PRLIMIT, LIMITS, new CgroupMode.V2(Path.of("/sys/fs/cgroup"), true)));
  }

  @Test
  void withRlimitsOnlyTheAddressSpaceStandsInForMemoryAndNprocIsNeverSet() {
    List<String> argv = Rlimits.prlimitPrefix(PRLIMIT, LIMITS, new CgroupMode.RlimitOnly("x"));

    assertEquals(
        List.of(
            "/usr/bin/prlimit",
            "--core=0",
            "--fsize=1048576",
            "--nofile=128:128",
            "--as=268435456",
            "--"),
        argv);
    assertTrue(argv.stream().noneMatch(a -> a.startsWith("--nproc")));
  }

  @Test
  void theChildGetsTheLimitsAndAFileSizeBombStopsAtTheLimit() throws Exception {
    Path bomb = dir.resolve("bomb");
    List<String> argv =
        new ArrayList<>(Rlimits.prlimitPrefix(PRLIMIT, LIMITS, new CgroupMode.RlimitOnly("x")));
    argv.addAll(
        List.of(
            "/bin/sh",
            "-c",
            "ulimit -n; ulimit -Hn; ulimit -f; ulimit -c; ulimit -v;"
                + " /usr/bin/head -c 4194304 /dev/zero > "
                + bomb
                + "; echo write=$?"));

    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the child ends");
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

    // sh's ulimit counts -f in 512-byte blocks and -v in KiB.
    List<String> lines = out.lines().toList();
    assertEquals(List.of("128", "128", "2048", "0", "262144"), lines.subList(0, 5), out);
    assertNotEquals("write=0", lines.get(lines.size() - 1), out);
    assertEquals(1L << 20, Files.size(bomb), "the file stops at file_size");
  }

  @Test
  void theExecutedCommandKeepsItsArgumentsAsGiven() throws IOException, InterruptedException {
    List<String> argv =
        new ArrayList<>(
            Rlimits.prlimitPrefix(PRLIMIT, LIMITS, new CgroupMode.V1(java.util.Map.of(), "")));
    argv.addAll(List.of("/bin/echo", "--fsize=1", "a b"));
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(
        "--fsize=1 a b\n", new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }
}
