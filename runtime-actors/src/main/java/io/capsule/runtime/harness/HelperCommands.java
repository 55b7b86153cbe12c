package io.capsule.runtime.harness;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Runs the short helper commands before a turn (docs/run-semantics.md §3): the version probe and
 * the login check. Each is a real process with the capsule's granted environment and working
 * directory, empty stdin, output captured, in its own process group, and killed (the whole group)
 * once it runs past the bound (default 10 s).
 *
 * <p>Threading: each call returns at once; the blocking work runs on the given executor and takes
 * three of its threads for the command's life (the wait, and one reader per output stream), so the
 * executor must be a pool (the run's blocking dispatcher), never a single thread. The run's actor
 * pipes the stage to itself. The bound is enforced here, by the process wait, not by an actor
 * timer.
 */
public final class HelperCommands {

  /** Output beyond this is read and discarded: a version line or a login answer is short. */
  static final int CAPTURE_BYTES = 64 * 1024;

  /** Reasons shown to a person are cut to their first line and 200 characters (§3). */
  static final int REASON_CHARS = 200;

  /** The login check's result: what read-login gets, or why the login was not checked. */
  public sealed interface LoginRun {
    record Ran(LoginOutput output) implements LoginRun {
      public Ran {
        Objects.requireNonNull(output, "output");
      }
    }

    record NotChecked(String reason) implements LoginRun {
      public NotChecked {
        Objects.requireNonNull(reason, "reason");
      }
    }
  }

  private final Executor executor;
  private final Duration bound;

  public HelperCommands(Executor executor, Duration bound) {
    this.executor = Objects.requireNonNull(executor, "executor");
    this.bound = Objects.requireNonNull(bound, "bound");
  }

  /** Runs the version probe ({@code binary} + {@code version-args}) and judges it. */
  public CompletionStage<VersionProbe.Result> probeVersion(
      Path binary, Description description, Map<String, String> env, Path workdir) {
    return run(binary, description.versionArgs(), env, workdir)
        .thenApply(
            outcome ->
                VersionProbe.judge(outcome, description.harness(), description.testedVersions()));
  }

  /**
   * Runs the login check. Only a command that finished within the bound is handed on as {@link
   * LoginRun.Ran}; {@code unavailable(reason)}, a timeout or a failed start are {@link
   * LoginRun.NotChecked} with a reason cut for display.
   */
  public CompletionStage<LoginRun> checkLogin(
      Path binary, LoginCheck check, Map<String, String> env, Path workdir) {
    if (check instanceof LoginCheck.Unavailable u) {
      return CompletableFuture.completedFuture(new LoginRun.NotChecked(shownReason(u.reason())));
    }
    List<String> args = ((LoginCheck.Command) check).args();
    return run(binary, args, env, workdir)
        .thenApply(
            outcome -> {
              if (outcome instanceof CommandOutcome.Finished f) {
                return new LoginRun.Ran(new LoginOutput(f.exitCode(), f.stdout(), f.stderr()));
              }
              if (outcome instanceof CommandOutcome.TimedOut t) {
                return new LoginRun.NotChecked(
                    "the login check gave no answer within " + t.bound().toSeconds() + " s");
              }
              return new LoginRun.NotChecked(
                  shownReason(((CommandOutcome.NotStarted) outcome).reason()));
            });
  }

  /** Runs {@code binary args} as described above. */
  public CompletionStage<CommandOutcome> run(
      Path binary, List<String> args, Map<String, String> env, Path workdir) {
    List<String> argsCopy = List.copyOf(args);
    Map<String, String> envCopy = Map.copyOf(env);
    return CompletableFuture.supplyAsync(
        () -> runBlocking(binary, argsCopy, envCopy, workdir), executor);
  }

  /** The first line, at most 200 characters. */
  public static String shownReason(String reason) {
    String first = reason.lines().findFirst().orElse("").trim();
    return first.length() <= REASON_CHARS ? first : first.substring(0, REASON_CHARS);
  }

  private CommandOutcome runBlocking(
      Path binary, List<String> args, Map<String, String> env, Path workdir) {
    Process process;
    try {
      process = HarnessSpawn.start(binary, args, env, workdir);
      process.getOutputStream().close();
    } catch (IOException e) {
      return new CommandOutcome.NotStarted(String.valueOf(e.getMessage()));
    }
    CompletableFuture<String> out =
        CompletableFuture.supplyAsync(() -> capture(process.getInputStream()), executor);
    CompletableFuture<String> err =
        CompletableFuture.supplyAsync(() -> capture(process.getErrorStream()), executor);
    try {
      boolean finished = process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS);
      // Timed out or not, nothing of the group may stay: orphans would hold the pipes open.
      ProcessGroup.killAll(process.pid(), process.toHandle());
      if (!finished) {
        return new CommandOutcome.TimedOut(bound);
      }
      // Nothing signalled it before it finished (the kill above comes after its exit).
      ExitCode how = ExitCode.decode(process.exitValue(), Set.of());
      return new CommandOutcome.Finished(how.code(), how.signal(), out.get(), err.get());
    } catch (InterruptedException e) {
      ProcessGroup.killAll(process.pid(), process.toHandle());
      Thread.currentThread().interrupt();
      return new CommandOutcome.NotStarted("interrupted");
    } catch (ExecutionException e) {
      return new CommandOutcome.NotStarted("reading its output failed: " + e.getCause());
    }
  }

  /** Reads to EOF, keeping the first {@link #CAPTURE_BYTES}; invalid UTF-8 is replaced. */
  private static String capture(InputStream in) {
    ByteArrayOutputStream kept = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    try (in) {
      int n;
      while ((n = in.read(buf)) >= 0) {
        int room = CAPTURE_BYTES - kept.size();
        if (room > 0) {
          kept.write(buf, 0, Math.min(room, n));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return kept.toString(StandardCharsets.UTF_8);
  }
}
