package io.capsule.runtime.harness.contain;

import io.capsule.config.diag.Diagnostic;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;

/**
 * One run's sandbox: what the harness and every bridged tool of the run are started in
 * (docs/containment.md). It owns the run's egress proxy (the one way out of every sandbox of the
 * run, so the allowlist, the connection bound and the refusal count are the run's, whoever
 * connects) and the hardening the command lines get. Each {@link #argv} is a new bubblewrap sandbox
 * with its own PID namespace over the same grants.
 *
 * <p>Threading: {@link #argv} and {@link #proxyEnv} may be called from any thread; {@link #close}
 * is idempotent and may race with them: a command line asked for after the close fails with {@link
 * IOException}, so no tool starts in a sandbox whose proxy is gone.
 */
public final class RunSandbox implements AutoCloseable {

  private final ContainmentConfig config;
  private final HarnessGrants grants;
  private final Path workdir;
  private final Path filesDir;
  private final EgressProxy proxy;
  private final SandboxCommand.Hardening hardening;
  private final ResourceLimits limits;
  private final RunCgroup cgroup;
  private final List<Diagnostic> warnings;
  private final AtomicBoolean closed = new AtomicBoolean();

  private RunSandbox(
      ContainmentConfig config,
      HarnessGrants grants,
      Path workdir,
      Path filesDir,
      EgressProxy proxy,
      SandboxCommand.Hardening hardening,
      ResourceLimits limits,
      RunCgroup cgroup,
      List<Diagnostic> warnings) {
    this.config = config;
    this.grants = grants;
    this.workdir = workdir;
    this.filesDir = filesDir;
    this.proxy = proxy;
    this.hardening = hardening;
    this.limits = limits;
    this.cgroup = cgroup;
    this.warnings = List.copyOf(warnings);
  }

  /**
   * Starts the run's egress proxy with the grants' allowlist and prepares the hardening. Blocking
   * (a socket bind, a small file): call off actor threads.
   *
   * @param refusals told of every connection the proxy refuses, from the proxy's threads
   */
  public static RunSandbox open(
      ContainmentConfig config,
      HarnessGrants grants,
      Path workdir,
      Path filesDir,
      EgressProxy.Refusals refusals)
      throws IOException {
    return open(
        config, grants, workdir, filesDir, refusals, SandboxCommand.Hardening.forThisMachine());
  }

  /** {@link #open} with the given hardening (another user's filter file, say). */
  public static RunSandbox open(
      ContainmentConfig config,
      HarnessGrants grants,
      Path workdir,
      Path filesDir,
      EgressProxy.Refusals refusals,
      SandboxCommand.Hardening hardening)
      throws IOException {
    Objects.requireNonNull(refusals, "refusals");
    ResourceLimits limits =
        ResourceLimits.effective(
            grants.resources(), config.resources(), Runtime.getRuntime().availableProcessors());
    CgroupMode mode = Mechanisms.of(config.resources());
    List<Diagnostic> warnings = new ArrayList<>(limits.warnings());
    mode.warning().ifPresent(warnings::add);
    RunCgroup cgroup = RunCgroup.create(mode, runId(filesDir), limits);
    EgressProxy proxy;
    try {
      proxy = EgressProxy.start(new EgressPolicy(grants.egress()), config, refusals);
    } catch (IOException | RuntimeException e) {
      closeQuietly(cgroup);
      throw e;
    }
    SandboxCommand.Hardening bounded =
        hardening.withCgroups(
            cgroup.procsFiles(),
            Rlimits.prlimitPrefix(Path.of(config.resources().prlimit()), limits, mode));
    return new RunSandbox(
        config,
        grants,
        workdir.toAbsolutePath(),
        filesDir.toAbsolutePath(),
        proxy,
        bounded,
        limits,
        cgroup,
        warnings);
  }

  /** A name for the run's cgroup: its files directory's (unique per run), made safe. */
  private static String runId(Path filesDir) {
    Path name = filesDir.getFileName();
    String id = name == null ? "run" : name.toString().replaceAll("[^A-Za-z0-9_.-]", "_");
    return id.length() > 64 ? id.substring(0, 64) : id;
  }

  /**
   * The command line that runs {@code command} (an absolute binary, then its arguments) in a new
   * sandbox of this run, its installation (and a script's interpreter's, found on {@code env}'s
   * {@code PATH}) shown read-only. Reads the disk.
   *
   * @throws IOException when the sandbox is closed (the run is ending) or the binary is gone
   */
  public List<String> argv(List<String> command, Map<String, String> env) throws IOException {
    if (closed.get()) {
      throw new IOException("the run's sandbox is closed");
    }
    List<Path> installation = Installations.of(Path.of(command.get(0)), env);
    return SandboxCommand.argv(
        new SandboxCommand.Inputs(
            Installations.SETSID,
            config.bwrap(),
            config.socat(),
            grants,
            workdir,
            filesDir,
            installation,
            proxy.socket(),
            command,
            hardening));
  }

  /** The variables that point a program at the sandbox's forwarder of the run's proxy. */
  public Map<String, String> proxyEnv() {
    return SandboxCommand.proxyEnv();
  }

  /** The working directory every sandbox of the run starts in. */
  public Path workdir() {
    return workdir;
  }

  /** The run's egress proxy's socket on the host (bound into every sandbox of the run). */
  public Path proxySocketPath() {
    return proxy.socket();
  }

  /** How many connections the run's proxy refused so far. */
  public long refusedCount() {
    return proxy.refusedCount();
  }

  /** The run's effective limits. */
  public ResourceLimits limits() {
    return limits;
  }

  /**
   * What the run is told once: a limit cut to the operator's ceiling ({@code W-CAP-054}), limits
   * enforced by rlimits only ({@code W-CAP-053}).
   */
  public List<Diagnostic> warnings() {
    return warnings;
  }

  /**
   * The limit the run's processes passed, as the kernel counted it ({@code E-RUN-047} memory,
   * {@code E-RUN-048} processes), or empty. Reads the cgroup's counters: call off actor threads.
   */
  public Optional<Diagnostic> breach() {
    try {
      return cgroup.breach().map(b -> b.diagnostic(limits));
    } catch (IOException e) {
      return Optional.empty(); // the cgroup is gone with the run
    }
  }

  /**
   * Closes the proxy (its tunnels with it) and removes the run's cgroup, ending every process still
   * in it (the harness's and its tools'). Idempotent. Blocking (bounded by the cgroup's close).
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      try {
        proxy.close();
      } finally {
        closeQuietly(cgroup);
      }
    }
  }

  private static void closeQuietly(RunCgroup cgroup) {
    try {
      cgroup.close();
    } catch (IOException e) {
      LoggerFactory.getLogger(RunSandbox.class)
          .warn("the run's cgroup {} could not be removed: {}", cgroup.dirs(), e.getMessage());
    }
  }
}
