package io.capsule.runtime.harness;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.runtime.harness.contain.Containment;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.EgressProxy;
import io.capsule.runtime.harness.contain.RunSandbox;
import io.capsule.runtime.harness.contain.SandboxLauncher;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Starting a process in its own process group and ending the whole group. Blocking (fork/exec,
 * signals): call on a blocking dispatcher.
 */
final class HarnessSpawn {

  private static final Path ENV = Path.of("/usr/bin/env");

  /**
   * Whether this JVM was started with SIGINT ignored (in the background of a shell without job
   * control, for instance). Ignored signals stay ignored across exec, so every harness would
   * inherit that and never see an interrupt; then {@code env --default-signal=INT} (coreutils 8.31
   * or newer) restores the default for the harness.
   */
  static final boolean JVM_IGNORES_SIGINT = jvmIgnoresSigint();

  private HarnessSpawn() {}

  /** The command line: setsid, (env --default-signal=INT when needed), binary, args. */
  static List<String> command(Path binary, List<String> args, boolean resetSigint) {
    List<String> command = new ArrayList<>(args.size() + 4);
    command.add(ProcessGroup.SETSID.toString());
    // env would read a binary path with '=' as an assignment; such a harness keeps the JVM's mask.
    if (resetSigint && Files.isExecutable(ENV) && binary.toString().indexOf('=') < 0) {
      command.add(ENV.toString());
      command.add("--default-signal=INT");
    }
    command.add(binary.toString());
    command.addAll(args);
    return command;
  }

  /**
   * Starts {@code binary args} through {@code setsid(1)}, so it leads a new session and process
   * group whose id is its pid ({@code setsid} forks only when already a group leader, which a child
   * of the JVM never is). The environment is exactly {@code env}; all three streams are piped.
   */
  static Process start(Path binary, List<String> args, Map<String, String> env, Path workdir)
      throws IOException {
    if (!Files.isExecutable(ProcessGroup.SETSID)) {
      throw new IOException("setsid(1) is missing at " + ProcessGroup.SETSID);
    }
    Path resolved = workdir.resolve(binary);
    if (!Files.isRegularFile(resolved) || !Files.isExecutable(resolved)) {
      throw new IOException(resolved + " is not an executable file");
    }
    ProcessBuilder builder =
        new ProcessBuilder(command(resolved, args, JVM_IGNORES_SIGINT)).directory(workdir.toFile());
    builder.environment().clear();
    builder.environment().putAll(env);
    return builder.start();
  }

  /** {@link #start(Path, List, Map, Path)} of an applied launch; the I/O error as unchecked. */
  static Process start(AppliedLaunch launch) {
    try {
      return start(launch.binary(), launch.args(), launch.env(), launch.workdir());
    } catch (IOException e) {
      throw new CompletionException(e);
    }
  }

  /**
   * A started harness: its process (the group leader: {@code bwrap} when contained), the run's
   * sandbox when contained (its egress proxy; the run's tools start in it too; closed when the
   * harness is released), and the containment it got.
   */
  record Started(Process process, Optional<RunSandbox> sandbox, Containment containment) {}

  /**
   * Decides the containment (probing the sandbox, blocking) and starts the harness: uncontained as
   * {@link #start(AppliedLaunch)}, or in the run's {@link RunSandbox}, opened first (its egress
   * proxy listening). {@code required} without a working sandbox throws the {@code E-CAP-051}
   * {@link io.capsule.config.diag.DiagnosticException}; other failures come as in {@link
   * #start(AppliedLaunch)}.
   */
  static Started start(
      AppliedLaunch launch, ContainmentConfig config, EgressProxy.Refusals refusals) {
    Containment containment = Containment.probeAndDecide(config);
    if (!containment.contained()) {
      return new Started(start(launch), Optional.empty(), containment);
    }
    RunSandbox sandbox;
    try {
      sandbox =
          RunSandbox.open(
              config,
              launch.grants(),
              launch.workdir().toAbsolutePath(),
              launch.filesDir(),
              refusals);
    } catch (IOException e) {
      throw new CompletionException(new IOException("could not start the egress proxy", e));
    }
    try {
      return new Started(startContained(launch, sandbox), Optional.of(sandbox), containment);
    } catch (IOException e) {
      sandbox.close();
      throw new CompletionException(e);
    } catch (RuntimeException e) {
      sandbox.close();
      throw e;
    }
  }

  private static Process startContained(AppliedLaunch launch, RunSandbox sandbox)
      throws IOException {
    if (!Files.isExecutable(ProcessGroup.SETSID)) {
      throw new IOException("setsid(1) is missing at " + ProcessGroup.SETSID);
    }
    Path workdir = launch.workdir().toAbsolutePath();
    Path resolved = workdir.resolve(launch.binary());
    if (!Files.isRegularFile(resolved) || !Files.isExecutable(resolved)) {
      throw new IOException(resolved + " is not an executable file");
    }
    List<String> harness = new ArrayList<>(launch.args().size() + 1);
    harness.add(resolved.toString());
    harness.addAll(launch.args());
    ProcessBuilder builder =
        new ProcessBuilder(sandbox.argv(harness, launch.env())).directory(workdir.toFile());
    builder.environment().clear();
    builder.environment().putAll(launch.env());
    builder.environment().putAll(sandbox.proxyEnv());
    return SandboxLauncher.start(builder); // not this pool thread: see SandboxLauncher
  }

  /** Why the harness did not start ({@code E-RUN-007}), naming its binary. */
  static Diagnostic notStarted(AppliedLaunch launch, Throwable failure) {
    return Diagnostic.of(
        Code.E_RUN_007,
        "could not start the harness: " + failure.getMessage(),
        Map.of("binary", launch.binary().toString()));
  }

  /**
   * {@link #killAndClose} on {@code io} (closing a pipe can wait for a blocked writer), inline only
   * when {@code io} takes no more work. With no leader yet, a spawn still in flight is killed as
   * soon as it completes.
   */
  static void release(Started started, CompletableFuture<Started> spawning, Executor io) {
    if (started == null) {
      spawning.thenAcceptAsync(HarnessSpawn::killAndClose, io);
      return;
    }
    try {
      io.execute(() -> killAndClose(started));
    } catch (RejectedExecutionException e) {
      killAndClose(started);
    }
  }

  /** {@link #killAndClose(Process)}, then the run's sandbox closed (its proxy's tunnels too). */
  static void killAndClose(Started started) {
    try {
      killAndClose(started.process());
    } finally {
      started.sandbox().ifPresent(RunSandbox::close);
    }
  }

  /** SIGKILL to the whole group, then the pipes closed (a blocked writer is released by then). */
  static void killAndClose(Process leader) {
    ProcessGroup.killAll(leader.pid(), leader.toHandle());
    closeQuietly(leader.getOutputStream());
    closeQuietly(leader.getInputStream());
    closeQuietly(leader.getErrorStream());
  }

  /** Bit 1 (SIGINT) of {@code SigIgn} in {@code /proc/self/status}. */
  private static boolean jvmIgnoresSigint() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("SigIgn:")) {
          return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & 0x2L) != 0;
        }
      }
    } catch (IOException | RuntimeException e) {
      // No /proc: assume the default disposition.
    }
    return false;
  }

  private static void closeQuietly(Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException e) {
      // The process is gone; nothing is left to flush.
    }
  }
}
