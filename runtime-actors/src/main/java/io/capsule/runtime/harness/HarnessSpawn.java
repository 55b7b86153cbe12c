package io.capsule.runtime.harness;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
   * {@link #killAndClose} on {@code io} (closing a pipe can wait for a blocked writer), inline only
   * when {@code io} takes no more work. With no leader yet, a spawn still in flight is killed as
   * soon as it completes.
   */
  static void release(Process leader, CompletableFuture<Process> spawning, Executor io) {
    if (leader == null) {
      spawning.thenAcceptAsync(HarnessSpawn::killAndClose, io);
      return;
    }
    try {
      io.execute(() -> killAndClose(leader));
    } catch (RejectedExecutionException e) {
      killAndClose(leader);
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
