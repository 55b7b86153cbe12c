package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Whether the sandbox can start on this machine: {@code bwrap} and {@code socat} are executables
 * and {@code bwrap} really makes the namespaces (it may be installed but refused by the kernel,
 * e.g. where unprivileged user namespaces are off). Blocking (runs bwrap once): call off actor
 * threads. A working pair is remembered for the JVM's life; a failing one is checked again next
 * time, so installing bubblewrap takes effect without a restart.
 */
public final class SandboxProbe {

  /** Bound on the trial run: bwrap starting {@code true} takes milliseconds. */
  static final Duration TRIAL_BOUND = Duration.ofSeconds(5);

  private static final Set<List<Path>> WORKING = ConcurrentHashMap.newKeySet();

  private SandboxProbe() {}

  /** Empty when the sandbox starts; else what is wrong, in one line. */
  public static Optional<String> problem(Path bwrap, Path socat) {
    List<Path> key = List.of(bwrap, socat);
    if (WORKING.contains(key)) {
      return Optional.empty();
    }
    if (!Files.isExecutable(bwrap) || Files.isDirectory(bwrap)) {
      return Optional.of("bubblewrap is not installed at " + bwrap);
    }
    if (!Files.isExecutable(socat) || Files.isDirectory(socat)) {
      return Optional.of("socat is not installed at " + socat);
    }
    if (!Files.isExecutable(SandboxCommand.ENV)) {
      return Optional.of(SandboxCommand.ENV + " is missing");
    }
    Optional<String> trial = trial(bwrap);
    if (trial.isEmpty()) {
      WORKING.add(key);
    }
    return trial;
  }

  private static Optional<String> trial(Path bwrap) {
    List<String> argv = new java.util.ArrayList<>();
    argv.add(SandboxCommand.ENV.toString());
    argv.add("--ignore-signal=INT");
    argv.add(bwrap.toString());
    // The flags of every real sandbox (SandboxCommand): a bubblewrap or kernel that cannot give
    // one of them fails here, not in the middle of a run.
    SandboxCommand.SandboxUser u = SandboxCommand.Hardening.SANDBOX_USER;
    argv.addAll(
        List.of(
            "--unshare-user",
            "--uid",
            Integer.toString(u.uid()),
            "--gid",
            Integer.toString(u.gid()),
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--cap-drop",
            "ALL",
            "--die-with-parent"));
    for (Mount m : SealedRoot.mounts(HostView.LIVE)) {
      m.appendTo(argv);
    }
    argv.add("--");
    argv.add("/bin/true");
    ProcessBuilder builder =
        new ProcessBuilder(argv)
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.PIPE);
    builder.environment().clear();
    Process p;
    try {
      p = builder.start();
    } catch (IOException e) {
      return Optional.of("could not start " + bwrap + ": " + e.getMessage());
    }
    try {
      p.getOutputStream().close();
      if (!p.waitFor(TRIAL_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        return Optional.of(bwrap + " did not finish a trial run within " + TRIAL_BOUND);
      }
      // Exited: the output (bounded by what a pipe holds) is complete.
      String out = new String(p.getInputStream().readNBytes(2048), StandardCharsets.UTF_8);
      return p.exitValue() == 0
          ? Optional.empty()
          : Optional.of(bwrap + " failed a trial run (exit " + p.exitValue() + "): " + out.strip());
    } catch (IOException e) {
      return Optional.of("could not read " + bwrap + "'s trial run: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      return Optional.of("interrupted while checking " + bwrap);
    } finally {
      p.destroyForcibly();
      closeQuietly(p);
    }
  }

  private static void closeQuietly(Process p) {
    try {
      p.getInputStream().close();
    } catch (IOException e) {
      // It has exited; nothing is left to read.
    }
  }
}
