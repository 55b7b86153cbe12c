package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Starts sandboxed processes from one thread that lives as long as the JVM.
 *
 * <p>Why: bubblewrap's {@code --die-with-parent} is {@code PR_SET_PDEATHSIG}, and Linux counts as
 * the "parent" the <em>thread</em> that forked the process, not the JVM. Started from a pool thread
 * (the harness I/O dispatcher's, which retire when idle), the sandbox would get SIGKILL whenever
 * that thread retired, in the middle of a run. Started from this thread, it dies with the JVM,
 * which is what the flag is for.
 *
 * <p>The thread only forks and execs (milliseconds; bubblewrap sets its namespaces up afterwards,
 * in the child), so one thread serves every run. It never ends: a failed start is returned to the
 * caller, not thrown on it.
 */
public final class SandboxLauncher {

  private static final ExecutorService THREAD =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "capsule-sandbox-launcher");
            t.setDaemon(true);
            return t;
          });

  private SandboxLauncher() {}

  /**
   * {@code builder.start()} on the launcher thread; blocks the caller until it returned. When the
   * caller is interrupted meanwhile, a process that still starts is killed (nobody would own it).
   */
  public static Process start(ProcessBuilder builder) throws IOException {
    CompletableFuture<Process> started = new CompletableFuture<>();
    THREAD.execute(
        () -> {
          try {
            started.complete(builder.start());
          } catch (IOException | RuntimeException e) {
            started.completeExceptionally(e);
          }
        });
    try {
      return started.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      throw new IOException("could not start the sandbox: " + cause.getMessage(), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      started.thenAccept(Process::destroyForcibly);
      throw new IOException("interrupted while starting the sandbox");
    }
  }
}
