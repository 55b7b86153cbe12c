package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.capsule.runtime.harness.contain.SeccompFilter.Arch;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The filter in the real kernel: a C probe ({@code src/test/resources/seccomp/probe.c}, compiled
 * here with {@code cc}) tries each ruled call inside real bubblewrap as an unprivileged user with
 * no capabilities, once with {@code --seccomp} and once without. The run without shows the sandbox
 * alone would have let several through (or failed them otherwise), so an EPERM with the filter is
 * the filter's. CI installs bubblewrap and gcc; elsewhere their absence skips.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SeccompKernelTest {

  static final Path BWRAP = Path.of("/usr/bin/bwrap");
  static final Path CC = Path.of("/usr/bin/cc");

  /** The probe makes a few dozen calls; bwrap starts in milliseconds. */
  static final long RUN_BOUND_SECONDS = 30;

  @TempDir static Path tmp;

  private Map<String, Integer> filtered;
  private Map<String, Integer> unfiltered;

  @BeforeAll
  void runTheProbeWithAndWithoutTheFilter() throws Exception {
    Arch arch = Arch.host().orElse(null);
    Assumptions.assumeTrue(arch != null, "no filter for os.arch " + System.getProperty("os.arch"));
    required(BWRAP, "bubblewrap");
    required(CC, "gcc");
    Path probeDir =
        Files.createDirectory(
            tmp.resolve("probe"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    Path source = probeDir.resolve("probe.c");
    try (InputStream in = getClass().getResourceAsStream("/seccomp/probe.c")) {
      Files.copy(in, source);
    }
    Path probe = probeDir.resolve("probe");
    assertEquals(0, run(List.of(CC.toString(), "-O0", "-o", probe.toString(), source.toString())));

    Path filter = SeccompFilter.writeTo(tmp.resolve("filter"), arch);
    List<String> withFilter =
        new ArrayList<>(List.of("/bin/sh", "-c", "exec 3<\"$0\"; exec \"$@\"", filter.toString()));
    withFilter.addAll(bwrap(probeDir, List.of("--seccomp", "3")));
    filtered = results(withFilter);
    unfiltered = results(bwrap(probeDir, List.of()));
  }

  private static void required(Path tool, String debianPackage) {
    if (!Files.isExecutable(tool)) {
      String missing = tool + " is missing: install the Debian package " + debianPackage;
      if (System.getenv("CI") != null) {
        fail(missing);
      }
      Assumptions.abort(missing);
    }
  }

  /** An unprivileged sandbox (uid 65534, no capabilities) with only /usr and the probe. */
  private static List<String> bwrap(Path probeDir, List<String> seccomp) {
    List<String> argv = new ArrayList<>(List.of(BWRAP.toString(), "--die-with-parent"));
    argv.addAll(seccomp);
    argv.addAll(
        List.of(
            "--unshare-all",
            "--unshare-user",
            "--uid",
            "65534",
            "--gid",
            "65534",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/bin",
            "/bin",
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/lib64",
            "/lib64",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--ro-bind",
            probeDir.toString(),
            "/probe",
            "--",
            "/probe/probe"));
    return argv;
  }

  /** The probe's lines as label → errno (0: the call succeeded). */
  private Map<String, Integer> results(List<String> argv) throws Exception {
    Path out = Files.createTempFile(tmp, "probe", ".out");
    int exit = run(argv, out);
    String text = read(out);
    assertEquals(0, exit, () -> "the probe ran to its end: " + text);
    Map<String, Integer> results = new HashMap<>();
    for (String line : text.lines().toList()) {
      String[] fields = line.split(" ");
      results.put(fields[0], Integer.parseInt(fields[1]));
    }
    return results;
  }

  private int run(List<String> argv) throws Exception {
    return run(argv, Files.createTempFile(tmp, "cmd", ".out"));
  }

  /** Runs {@code argv} with stdin from /dev/null (not a terminal) and its output to {@code out}. */
  private static int run(List<String> argv, Path out) throws Exception {
    Process p =
        new ProcessBuilder(argv)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    if (!p.waitFor(RUN_BOUND_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor(RUN_BOUND_SECONDS, TimeUnit.SECONDS);
      fail(argv.get(0) + " did not end in " + RUN_BOUND_SECONDS + " s: " + read(out));
    }
    return p.exitValue();
  }

  private static String read(Path out) throws IOException {
    return Files.readString(out, StandardCharsets.UTF_8);
  }

  @ParameterizedTest(name = "{0} -> errno {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # probe label       | errno with the filter (0: succeeded; 1 EPERM; 38 ENOSYS)
          unix-stream         | 0
          inet-stream         | 0
          inet6-dgram         | 0
          unix-pair           | 0
          fork                | 0
          personality-query   | 0
          netlink             | 1
          packet              | 1
          inet-raw            | 1
          inet-packet         | 1
          alg                 | 1
          netlink-pair        | 1
          tiocsti             | 1
          ptrace              | 1
          process_vm_readv    | 1
          keyctl              | 1
          add_key             | 1
          bpf                 | 1
          perf_event_open     | 1
          userfaultfd         | 1
          io_uring_setup      | 1
          unshare-user        | 1
          unshare-net         | 1
          clone-user          | 1
          clone-net           | 1
          clone3              | 38
          setns               | 1
          mount               | 1
          umount2             | 1
          fsopen              | 1
          open_tree           | 1
          personality-unsafe  | 1
          init_module         | 1
          """)
  void eachCallGetsWhatTheFilterSays(String label, int errno) {
    assertEquals(errno, filtered.get(label), () -> label + " in " + filtered);
  }

  @Test
  void theFilterIsInstalledAndWithoutItTheSandboxLetsSomeThrough() {
    assertEquals(2, filtered.get("seccomp-mode"), "SECCOMP_MODE_FILTER with --seccomp");
    assertEquals(0, unfiltered.get("seccomp-mode"), "no filter without it");
    // Without the filter: netlink opens, TIOCSTI fails only because stdin is no terminal,
    // setns fails on the bad fd, clone3 reads no flags: the EPERMs above are the filter's.
    assertEquals(0, unfiltered.get("netlink"), () -> "without the filter: " + unfiltered);
    assertEquals(25, unfiltered.get("tiocsti"), "ENOTTY");
    assertEquals(9, unfiltered.get("setns"), "EBADF");
    assertNotEquals(38, unfiltered.get("clone3"));
    assertEquals(unfiltered.keySet(), filtered.keySet(), "both runs reached the end");
  }

  @Test
  void otherAbisAreRefusedOnX86() {
    Assumptions.assumeTrue(Arch.host().orElseThrow() == Arch.X86_64, "x86_64 only");
    assertEquals(1, filtered.get("x32"), "x32 getpid: EPERM");
    // i386 through int 0x80: where the kernel serves it (getpid succeeded without the filter).
    Assumptions.assumeTrue(unfiltered.get("int80") == 0, "this kernel has no IA32 emulation");
    assertEquals(1, filtered.get("int80"), "i386 getpid: EPERM");
  }
}
