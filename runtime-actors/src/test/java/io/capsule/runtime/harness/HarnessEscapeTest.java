package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.ContainedFixture.limits;
import static io.capsule.runtime.harness.ContainedFixture.lines;
import static io.capsule.runtime.harness.ContainedFixture.untilEnd;

import io.capsule.config.settings.ResourceSettings;
import io.capsule.runtime.escape.HostTargets;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.harness.contain.RunSandbox;
import io.capsule.runtime.harness.contain.SandboxCommand;
import io.capsule.runtime.harness.contain.SeccompFilter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The escape suite against a hostile harness (docs/containment.md "Escape suite"): with containment
 * required, every escape the hostile script tries is refused, on a runner running as root (CI) —
 * the sandbox has no capabilities in a user namespace of its own, whatever the runner is.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HarnessEscapeTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;

  @Test
  void aHostileHarnessEscapesNowhere() throws Exception {
    try (HostTargets host = new HostTargets()) {
      Path script = HostTargets.installScript(runDir);
      List<String> args = new ArrayList<>();
      args.add(script.toString());
      args.addAll(host.args());
      HarnessGrants grants =
          new HarnessGrants(List.of(), List.of(), false, Path.of(System.getProperty("user.home")));
      AppliedLaunch launch = ContainedFixture.launch(runDir, grants, Path.of("/bin/sh"), args);
      TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
      ActorRef<HarnessProcess.Command> harness =
          testKit.spawn(
              HarnessProcess.create(
                  launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
      List<HarnessProcess.Event> events = untilEnd(probe, harness);
      host.assertAllHeld(String.join("\n", lines(events)), HostTargets.ALWAYS);
      launch.close();
    }
  }

  /**
   * The same sandbox started by a runner that is not root: the run's command line under {@code
   * setpriv} as uid and gid 65534 with no supplementary groups and no capabilities, so bubblewrap
   * makes its namespaces unprivileged (this machine kind allows unprivileged user namespaces).
   */
  @Test
  void anUnprivilegedRunnersSandboxHoldsToo() throws Exception {
    Path setpriv = Path.of("/usr/bin/setpriv");
    Assumptions.assumeTrue(Files.isExecutable(setpriv), "util-linux's setpriv is not installed");
    // Under /tmp, which the sandbox shows anyway (a private one, with this bound onto it).
    Path work = Files.createTempDirectory("capsule-unprivileged-");
    try (HostTargets host = new HostTargets()) {
      Path files = Files.createDirectories(work.resolve("files"));
      Path home = Files.createDirectories(work.resolve("home"));
      Path script = HostTargets.installScript(work);
      for (Path p : List.of(work, files, home, script)) {
        Files.setAttribute(p, "unix:uid", NOBODY);
        Files.setAttribute(p, "unix:gid", NOBODY);
      }
      // An unprivileged runner writes its own filter, where only it can replace it.
      Path filterDir = work.resolve("seccomp");
      Path filter = SeccompFilter.writeTo(filterDir, SeccompFilter.Arch.host().orElseThrow());
      for (Path p : List.of(filterDir, filter)) {
        Files.setAttribute(p, "unix:uid", NOBODY);
        Files.setAttribute(p, "unix:gid", NOBODY);
      }
      try (RunSandbox sandbox =
          RunSandbox.open(
              // An unprivileged runner without a delegated cgroup: rlimits only (W-CAP-053).
              ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED)
                  .withResources(rlimitOnly()),
              new HarnessGrants(List.of(), List.of(), false, home),
              work,
              files,
              (h, p, r, n) -> {},
              SandboxCommand.Hardening.forThisMachine().withSeccompFilter(Optional.of(filter)))) {
        // The runner's own proxy socket: an unprivileged runner creates it as itself.
        Path socket = sandbox.proxySocketPath();
        Files.setPosixFilePermissions(
            socket.getParent(), PosixFilePermissions.fromString("rwx--x--x"));
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        List<String> command = new ArrayList<>();
        command.add("/bin/sh");
        command.add(script.toString());
        command.addAll(host.args());
        List<String> argv =
            new ArrayList<>(
                List.of(
                    setpriv.toString(),
                    "--reuid=" + NOBODY,
                    "--regid=" + NOBODY,
                    "--clear-groups",
                    "--inh-caps=-all",
                    "--bounding-set=-all",
                    "--"));
        argv.addAll(sandbox.argv(command, Map.of("PATH", "/usr/bin:/bin")));
        ProcessBuilder pb = new ProcessBuilder(argv).directory(work.toFile());
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/bin:/bin");
        pb.redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process p = pb.start();
        String out;
        try (var in = p.getInputStream()) {
          out = new String(in.readNBytes(1 << 20), StandardCharsets.UTF_8);
        } finally {
          if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
          }
        }
        host.assertAllHeld(out, HostTargets.ALWAYS);
      }
    } finally {
      AppliedLaunch.deleteTree(work);
    }
  }

  private static final int NOBODY = 65534;

  private static ResourceSettings rlimitOnly() {
    ResourceSettings d = ResourceSettings.DEFAULTS;
    return new ResourceSettings(
        ResourceSettings.Mechanism.RLIMIT_ONLY,
        d.cgroupRoot(),
        d.cgroupParent(),
        d.prlimit(),
        d.memory(),
        d.memoryMax(),
        d.processes(),
        d.processesMax(),
        d.cpu(),
        d.cpuMax(),
        d.fileSize(),
        d.fileSizeMax(),
        d.openFiles(),
        d.openFilesMax());
  }
}
