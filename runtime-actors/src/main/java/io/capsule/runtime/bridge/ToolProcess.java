package io.capsule.runtime.bridge;

import io.capsule.runtime.harness.ProcessGroup;
import io.capsule.runtime.harness.contain.SandboxLauncher;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.Scheduler;
import scala.concurrent.ExecutionContext;

/**
 * One running tool: its OS process group, its output pumps, its timeout. Owns the process; nobody
 * else signals it.
 *
 * <p>Threading: {@link #kill} may be called from any thread, any number of times (the first reason
 * wins). The {@link #outcome()} completes on a pump or reaper thread once the process has exited
 * and its output is read. Blocking reads and waits run on the bridge's I/O executor, never on a
 * Pekko dispatcher thread.
 */
final class ToolProcess {

  /** Why the process ended. */
  enum End {
    EXITED,
    TIMED_OUT,
    ABANDONED,
    STOPPED
  }

  /**
   * What a finished tool left: how it ended, its exit code when it exited by itself, its output (at
   * most the cap, stdout and stderr together) and whether output was dropped.
   */
  record Outcome(End end, OptionalInt exitCode, String stdout, String stderr, boolean truncated) {
    Outcome {
      Objects.requireNonNull(end, "end");
    }
  }

  /**
   * After the tool's group is gone, how long its pipes may stay open (held by a process that left
   * the group) before the bridge closes them: the result must not wait on an escaped daemon.
   */
  private static final Duration PIPE_GRACE = Duration.ofSeconds(2);

  private final Process process;
  private final Executor io;
  private final AtomicReference<End> killedFor = new AtomicReference<>();
  private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
  private final Budget budget;
  private final Cancellable timeout;

  private ToolProcess(
      Process process,
      Executor io,
      int outputCap,
      Scheduler scheduler,
      ExecutionContext ec,
      Duration callTimeout) {
    this.process = process;
    this.io = io;
    this.budget = new Budget(outputCap);
    this.timeout = scheduler.scheduleOnce(callTimeout, () -> kill(End.TIMED_OUT), ec);
  }

  /**
   * Starts {@code argv} (a sandbox's when {@code sandboxed}) in {@code workdir} with exactly {@code
   * env}, stdin fed from {@code stdin} (or {@code /dev/null}), and its group killed when {@code
   * callTimeout} passes.
   *
   * @throws IOException when the process cannot be started
   */
  static ToolProcess start(
      List<String> argv,
      java.nio.file.Path workdir,
      java.util.Map<String, String> env,
      boolean sandboxed,
      Optional<String> stdin,
      int outputCap,
      Duration callTimeout,
      Executor io,
      Scheduler scheduler,
      ExecutionContext ec)
      throws IOException {
    ProcessBuilder pb = new ProcessBuilder(argv).directory(workdir.toFile());
    pb.environment().clear();
    pb.environment().putAll(env);
    if (stdin.isEmpty()) {
      pb.redirectInput(new File("/dev/null"));
    }
    // A sandbox dies with the thread that forked it (--die-with-parent): fork it from the one
    // thread that lives as long as the JVM, never from this one, which may be a pool's.
    Process process = sandboxed ? SandboxLauncher.start(pb) : pb.start();
    ToolProcess tool = new ToolProcess(process, io, outputCap, scheduler, ec, callTimeout);
    tool.run(stdin);
    return tool;
  }

  /** The process group id (the pid: {@code setsid} made the tool a group leader). */
  long pgid() {
    return process.pid();
  }

  CompletableFuture<Outcome> outcome() {
    return outcome;
  }

  /** Kills the whole process group; the outcome reports {@code reason} (the first one given). */
  void kill(End reason) {
    if (killedFor.compareAndSet(null, reason)) {
      killGroup();
    }
  }

  private void run(Optional<String> stdin) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CompletableFuture<Void> outDone = pump(process.getInputStream(), out);
    CompletableFuture<Void> errDone = pump(process.getErrorStream(), err);
    stdin.ifPresent(text -> CompletableFuture.runAsync(() -> feed(text), io));
    CompletableFuture<Void> pumps = CompletableFuture.allOf(outDone, errDone);
    process
        .onExit()
        .thenRun(
            () -> {
              timeout.cancel();
              // whatever the leader left running in its group goes with it; the group id cannot
              // have been reused yet while members remain, and pids wrap far slower than this runs.
              // The outcome waits for the group to be gone (killAll's bounded wait), so nothing
              // of a call outlives its Finished.
              CompletableFuture.allOf(
                      killGroup(),
                      pumps.completeOnTimeout(null, PIPE_GRACE.toMillis(), TimeUnit.MILLISECONDS))
                  .thenRun(() -> finish(out, err));
            });
  }

  private void finish(ByteArrayOutputStream out, ByteArrayOutputStream err) {
    closeQuietly(process.getInputStream());
    closeQuietly(process.getErrorStream());
    End reason = killedFor.get();
    End end = reason == null ? End.EXITED : reason;
    OptionalInt code =
        end == End.EXITED ? OptionalInt.of(process.exitValue()) : OptionalInt.empty();
    String stdout;
    String stderr;
    synchronized (budget) {
      stdout = out.toString(StandardCharsets.UTF_8);
      stderr = err.toString(StandardCharsets.UTF_8);
    }
    outcome.complete(new Outcome(end, code, stdout, stderr, budget.truncated));
  }

  private CompletableFuture<Void> pump(InputStream in, ByteArrayOutputStream sink) {
    return CompletableFuture.runAsync(
        () -> {
          byte[] buf = new byte[8192];
          try {
            int n;
            while ((n = in.read(buf)) >= 0) {
              synchronized (budget) {
                int keep = budget.take(n);
                sink.write(buf, 0, keep);
              }
            }
          } catch (IOException e) {
            // the stream was closed under us (pipe grace elapsed, or the process died): done
          }
        },
        io);
  }

  private void feed(String text) {
    try (OutputStream stdin = process.getOutputStream()) {
      stdin.write(text.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      // the tool exited or closed its stdin without reading everything: its choice, not a failure
    }
  }

  /** Completes when the group is gone (or killAll's bound passed); never exceptionally. */
  private CompletableFuture<Void> killGroup() {
    // The one process-group utility, with its wait: no helper process, no member left behind.
    return CompletableFuture.runAsync(() -> ProcessGroup.killAll(pgid(), process.toHandle()), io)
        .exceptionally(failure -> null);
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException e) {
      // closing a pipe we are done with cannot fail in a way that matters
    }
  }

  /** The output cap shared by stdout and stderr; guarded by its own monitor. */
  private static final class Budget {
    private int left;
    private boolean truncated;

    Budget(int cap) {
      this.left = cap;
    }

    int take(int n) {
      int keep = Math.min(n, left);
      left -= keep;
      if (keep < n) {
        truncated = true;
      }
      return keep;
    }
  }
}
