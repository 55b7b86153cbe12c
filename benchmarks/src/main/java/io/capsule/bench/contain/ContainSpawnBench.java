package io.capsule.bench.contain;

import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.harness.contain.RunSandbox;
import io.capsule.runtime.harness.contain.SandboxCommand;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What containment costs at spawn, beside the uncontained baseline in the same run: a harness
 * ({@code /bin/sh} printing one line) started and its first stdout line read, to its exit, under
 * {@code setsid} alone ({@code sandbox=none}), in the sandbox as it was before the sealed root
 * ({@code namespaces}: bubblewrap's namespaces over a read-only bind of the whole host root, the
 * egress forwarder started and awaited), and in the run's sandbox as the runtime builds it now
 * ({@code sealed}: a user namespace as nobody, no capabilities, the sealed root, the syscall filter
 * and the run's cgroups where the machine has them; docs/containment.md). Each operation checks the
 * line and the exit and throws on a wrong one. Needs {@code /usr/bin/bwrap} and {@code
 * /usr/bin/socat}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 4)
@Fork(1)
public class ContainSpawnBench {

  @Param({"none", "namespaces", "sealed"})
  public String sandbox;

  static final List<String> HARNESS = List.of("/bin/sh", "-c", "echo first-line");

  private RunSandbox run;
  private Path workdir;
  private List<String> argv;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    workdir = Files.createTempDirectory("capsule-contain-bench-");
    run =
        RunSandbox.open(
            ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED),
            new HarnessGrants(List.of(), List.of(), false, Path.of("/root")),
            workdir,
            workdir,
            (h, p, r, n) -> {});
    argv =
        switch (sandbox) {
          case "none" -> List.of("/usr/bin/setsid", "/bin/sh", "-c", "echo first-line");
          case "namespaces" -> namespacesOnly();
          case "sealed" -> run.argv(HARNESS, Map.of("PATH", "/usr/bin:/bin"));
          default -> throw new IllegalArgumentException(sandbox);
        };
  }

  /** The sandbox before the sealed root, for the before/after ratio in one run. */
  private List<String> namespacesOnly() {
    return namespacesOnly(workdir, run);
  }

  /** The sandbox before the sealed root, in {@code workdir}, with {@code run}'s proxy. */
  static List<String> namespacesOnly(Path workdir, RunSandbox run) {
    List<String> cmd = new ArrayList<>();
    cmd.addAll(
        List.of(
            "/usr/bin/setsid",
            "/usr/bin/env",
            "--ignore-signal=INT",
            "/usr/bin/bwrap",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/root",
            "--bind",
            workdir.toString(),
            workdir.toString(),
            "--bind",
            run.proxySocketPath().toString(),
            SandboxCommand.SOCKET_INSIDE,
            "--chdir",
            workdir.toString(),
            "--",
            "/bin/sh",
            "-c",
            SandboxCommand.insideScript(Path.of("/usr/bin/socat"), List.of()),
            "capsule-sandbox",
            "/usr/bin/env",
            "--default-signal=INT"));
    cmd.addAll(HARNESS);
    return cmd;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    run.close();
    Files.deleteIfExists(workdir);
  }

  @Benchmark
  public String spawnToFirstLine() throws IOException, InterruptedException {
    return spawnToFirstLine(argv, workdir);
  }

  /** One harness started, its first line read, its exit awaited; throws on a wrong answer. */
  static String spawnToFirstLine(List<String> argv, Path workdir)
      throws IOException, InterruptedException {
    Process p = new ProcessBuilder(argv).directory(workdir.toFile()).start();
    p.getOutputStream().close();
    String line;
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      line = r.readLine();
    }
    if (p.waitFor() != 0 || !"first-line".equals(line)) {
      throw new IllegalStateException("harness said " + line + ", exit " + p.exitValue());
    }
    return line;
  }
}
