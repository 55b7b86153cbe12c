package io.capsule.cli;

import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestLoader;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.DriverGrant;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.runtime.harness.HelperCommands;
import io.capsule.runtime.harness.VersionProbe;
import io.capsule.runtime.harness.contain.CgroupMode;
import io.capsule.runtime.harness.contain.Containment;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.harness.contain.ResourceLimits;
import io.capsule.runtime.harness.contain.SandboxCheck;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code capsule doctor}: everything a run checks before it spawns the harness, in the same order,
 * plus the login check, with the effective grants. Exit 0 only when a run could start.
 */
@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    description =
        "Check a capsule: manifest, driver, grants, harness binary, version and login; print the"
            + " effective grants. Exit 0 only when a run could start.")
final class DoctorCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Parameters(
      index = "0",
      paramLabel = "CAPSULE_DIR",
      description = "the capsule folder (holding murmur.yaml)")
  Path capsuleDir;

  private PrintWriter out;

  @Override
  public Integer call() throws Exception {
    out = spec.commandLine().getOut();
    Manifest manifest;
    try {
      manifest = ManifestLoader.load(capsuleDir);
    } catch (DiagnosticException e) {
      row("manifest", "refused");
      e.diagnostics().forEach(this::refusal);
      return done(ExitCodes.USAGE);
    }
    row("manifest", "ok: " + manifest.name() + " " + manifest.version());
    FolderNames.mismatch(manifest).ifPresent(this::refusal);
    manifest.warnings().forEach(this::refusal);

    CapsuleSettings settings = CapsuleSettings.load();
    try (DriverLoader loader = RuntimeWiring.driverLoader(settings)) {
      LoadedDriver driver;
      try {
        driver = loader.load(manifest);
      } catch (DiagnosticException e) {
        row("driver", "refused");
        e.diagnostics().forEach(this::refusal);
        return done(CapsuleMain.exitCodeFor(e.code()));
      }
      Description d = driver.description();
      row(
          "driver",
          "ok: " + driver.origin() + " for " + d.harness() + " (" + driver.engineName() + ")");
      row("env", String.join(", ", manifest.capabilities().env().granted()));

      DriverGrant grant;
      try {
        grant = DriverLoader.checkAgainst(driver, manifest, System.getenv(), false);
      } catch (DiagnosticException e) {
        row("grants", "refused");
        e.diagnostics().forEach(this::refusal);
        return done(CapsuleMain.exitCodeFor(e.code()));
      }
      grant.paths().forEach(p -> row("path", p.path() + " (" + p.access().witName() + ")"));
      grant.hosts().forEach(h -> row("host", h.toString()));
      row("binary", grant.harnessBinary().toString());
      if (!containment(settings, manifest)) {
        return done(ExitCodes.HARNESS_UNAVAILABLE);
      }

      Map<String, String> env = manifest.capabilities().env().grantedValues(System.getenv());
      Path workdir = Files.createTempDirectory("capsule-doctor-");
      ExecutorService pool = Executors.newCachedThreadPool();
      try {
        HelperCommands helpers = new HelperCommands(pool, settings.run().versionProbeTimeout());
        VersionProbe.Result version =
            helpers
                .probeVersion(grant.harnessBinary(), d, env, workdir)
                .toCompletableFuture()
                .join();
        row(
            "version",
            version.version().orElse("none") + (version.tested() ? " (tested)" : " (untested)"));
        version.warning().ifPresent(this::refusal);

        HelperCommands.LoginRun login =
            helpers
                .checkLogin(grant.harnessBinary(), d.loginCheck(), env, workdir)
                .toCompletableFuture()
                .join();
        if (login instanceof HelperCommands.LoginRun.NotChecked n) {
          row("login", "not checked: " + n.reason());
        } else {
          LoginState state;
          try (ProcessDriver instance = driver.newInstance()) {
            state = instance.readLogin(((HelperCommands.LoginRun.Ran) login).output());
          }
          LoginVerdict verdict =
              LoginVerdict.of(
                  state,
                  HelperCommands.shownReason(reason(state)),
                  env.keySet(),
                  manifest.inference().driver().config());
          row("login", verdict.row());
          if (verdict.refuses()) {
            return done(ExitCodes.HARNESS_UNAVAILABLE);
          }
        }
      } finally {
        pool.shutdownNow();
        Files.deleteIfExists(workdir);
      }
    }
    out.println("ready: a run could start");
    return done(ExitCodes.DONE);
  }

  /**
   * The containment a run would use and the grants as the sandbox applies them; when contained, a
   * real sandbox and egress proxy are started and must answer. False when a run would be refused
   * ({@code required} without a working sandbox).
   */
  private boolean containment(CapsuleSettings settings, Manifest manifest) throws IOException {
    ContainmentConfig config = RuntimeWiring.containment(settings);
    String mode = config.mode().name().toLowerCase(Locale.ROOT);
    Containment decided;
    try {
      decided = Containment.probeAndDecide(config);
    } catch (DiagnosticException e) {
      row("contain", mode + ": refused");
      refusal(e.diagnostic());
      return false;
    }
    if (!decided.contained()) {
      row("contain", mode + ": uncontained (grants are not enforced on the harness)");
      decided.warning().ifPresent(this::refusal);
      return true;
    }
    Path home = Path.of(System.getenv().getOrDefault("HOME", System.getProperty("user.home")));
    HarnessGrants grants = HarnessGrants.of(manifest, home);
    row("contain", mode + ": bubblewrap " + config.bwrap() + ", egress only through the proxy");
    row(
        "egress",
        grants.network().isEmpty()
            ? "no host (every connection is refused)"
            : grants.network().stream().map(Object::toString).collect(Collectors.joining(", ")));
    grants.paths().forEach(p -> row("bind", p.path() + " (" + p.access().yaml() + ")"));
    grants.capsuleDir().ifPresent(d -> row("bind", d + " (read, the capsule folder)"));
    row("workdir", grants.readOnly() ? "read-only (filesystem.read_only)" : "writable");
    row(
        "sees",
        "/usr, the lib and bin directories and a curated /etc, read-only; the binds above;"
            + " a private /tmp, /dev and /proc (docs/containment.md)");
    row("hidden", "the rest of the host: " + home + ", /run and its sockets, /var, /srv, /opt, …");
    row("user", "root of its own user namespace: no capabilities, no new privileges");
    row("tools", "each bridged tool runs in a sandbox of its own with the same grants and proxy");
    row(
        "filter",
        "a syscall filter (no mounts, namespaces, ptrace, bpf, io_uring, raw sockets, …)");
    ResourceLimits limits =
        ResourceLimits.effective(
            manifest.capabilities().resources(),
            config.resources(),
            Runtime.getRuntime().availableProcessors());
    CgroupMode mechanism = CgroupMode.detect(config.resources());
    row(
        "limits",
        String.format(
            Locale.ROOT,
            "memory %d MiB, %d processes, %.2f cores, files up to %d MiB, %d open files",
            limits.memoryBytes() >> 20,
            limits.processes(),
            limits.cpuCores(),
            limits.fileSizeBytes() >> 20,
            limits.openFiles()));
    row("bounded", mechanism.describe());
    limits.warnings().forEach(this::refusal);
    mechanism.warning().ifPresent(this::refusal);
    Path workdir = Files.createTempDirectory("capsule-doctor-sandbox-");
    try {
      Optional<String> problem = SandboxCheck.run(config, grants, workdir);
      if (problem.isPresent()) {
        row("sandbox", "failed: " + problem.get());
        return config.mode() != ContainmentConfig.Mode.REQUIRED;
      }
      row("sandbox", "ok: started, and the egress proxy answered from inside");
      return true;
    } finally {
      Files.deleteIfExists(workdir);
    }
  }

  private static String reason(LoginState state) {
    if (state instanceof LoginState.LoggedOut o) {
      return o.reason();
    }
    return state instanceof LoginState.Unknown u ? u.reason() : "";
  }

  private void row(String what, String value) {
    out.printf("%-9s %s%n", what, value);
  }

  private void refusal(Diagnostic d) {
    out.println("  " + d.render().replace(System.lineSeparator(), System.lineSeparator() + "  "));
  }

  private int done(int code) {
    if (code != ExitCodes.DONE) {
      out.println("not ready: a run would be refused (exit " + code + ")");
    }
    out.flush();
    return code;
  }
}
