package io.capsule.cli;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Ctrl-C (SIGINT, or SIGTERM) during a run: cancel it the graceful way and keep the JVM alive until
 * the outcome is printed, bounded by {@code wait}. The actor system's own JVM hook is off (see
 * {@link CliSystem}), so the system still runs while the run winds down. Afterwards the JVM halts
 * with the run's exit code (1, canceled).
 */
final class CtrlC {
  private final Thread hook;

  private CtrlC(Thread hook) {
    this.hook = hook;
  }

  static CtrlC install(Runnable cancel, CompletableFuture<?> printed, Duration wait) {
    Thread hook =
        new Thread(
            () -> {
              cancel.run();
              try {
                printed.get(wait.toMillis(), TimeUnit.MILLISECONDS);
              } catch (Exception e) {
                // Past the bound the JVM exits anyway; the harness group dies with its pipes.
              }
              System.out.flush();
              Runtime.getRuntime().halt(ExitCodes.TASK_FAILED);
            },
            "capsule-ctrl-c");
    Runtime.getRuntime().addShutdownHook(hook);
    return new CtrlC(hook);
  }

  void uninstall() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException alreadyShuttingDown) {
      // The hook is running: it finishes the job.
    }
  }
}
