package io.capsule.bench.contain;

import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.harness.contain.SandboxCommand;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
 * What containment costs at spawn (issue #13), beside the uncontained baseline in the same run: a
 * harness ({@code /bin/sh} printing one line) started and its first stdout line read, to its exit,
 * under {@code setsid} alone ({@code contained=false}) or in the sandbox the runtime builds ({@code
 * true}: bubblewrap with the run's mounts, the egress forwarder started and awaited, the run's
 * proxy already listening). Each operation checks the line and the exit and throws on a wrong one.
 * Needs {@code /usr/bin/bwrap} and {@code /usr/bin/socat}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 4)
@Fork(1)
public class ContainSpawnBench {

  @Param({"false", "true"})
  public boolean contained;

  private EgressRig rig;
  private Path workdir;

  @Setup(Level.Trial)
  public void setUp() throws IOException, InterruptedException {
    rig = EgressRig.start();
    workdir = Files.createTempDirectory("capsule-contain-bench-");
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    rig.close();
    Files.deleteIfExists(workdir);
  }

  @Benchmark
  public String spawnToFirstLine() throws IOException, InterruptedException {
    List<String> harness = List.of("/bin/sh", "-c", "echo first-line");
    List<String> argv =
        contained
            ? SandboxCommand.argv(
                new SandboxCommand.Inputs(
                    Path.of("/usr/bin/setsid"),
                    EgressRig.CONFIG.bwrap(),
                    EgressRig.CONFIG.socat(),
                    new HarnessGrants(List.of(), List.of(), false, Path.of("/root")),
                    workdir,
                    workdir,
                    List.of(),
                    rig.proxySocket(),
                    harness))
            : List.of("/usr/bin/setsid", "/bin/sh", "-c", "echo first-line");
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
