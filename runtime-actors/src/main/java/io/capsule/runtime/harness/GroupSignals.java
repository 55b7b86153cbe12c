package io.capsule.runtime.harness;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The signals one harness actor sends to its process group, and what they mean for how the exit
 * reads: an interrupt (SIGINT) and the kill (SIGKILL of every member, with the group's wait), each
 * run on the I/O executor (except {@link #goneAfterExit}, one system call that never waits);
 * whether a kill was asked for; whether the runtime killed the harness while it ran; the signals
 * sent, which decide whether a status in 129..192 is a signal or a code ({@link ExitCode}).
 * Confined to its owning actor: call it only from the actor's thread; the returned stages complete
 * on the executor.
 */
final class GroupSignals {

  private final Executor io;
  private final Set<Integer> sent = new HashSet<>();
  private Process leader;
  private long pgid;
  private boolean killRequested;
  private boolean killedByRuntime;

  GroupSignals(Executor io) {
    this.io = io;
  }

  /** The harness runs: it leads its group, whose id is its pid. */
  void started(Process process) {
    leader = process;
    pgid = process.pid();
  }

  long pgid() {
    return pgid;
  }

  /** Marks the kill asked for; false when it already was (a kill is idempotent). */
  boolean requestKill() {
    if (killRequested) {
      return false;
    }
    killRequested = true;
    return true;
  }

  boolean killRequested() {
    return killRequested;
  }

  /** A kill (or the actor's stop) arrived while the harness ran. */
  boolean killedByRuntime() {
    return killedByRuntime;
  }

  /** SIGINT to the group; completes with whether it was delivered. */
  CompletableFuture<Boolean> interrupt() {
    long group = pgid;
    sent.add(ExitCode.SIGINT);
    return CompletableFuture.supplyAsync(() -> ProcessGroup.signal(group, "INT"), io);
  }

  /**
   * SIGKILL to every member of the group, then the group's wait ({@link ProcessGroup#killAll});
   * {@code leaderExited} says whether the harness itself was already gone (then it was not killed
   * by the runtime, only what it left behind).
   */
  CompletableFuture<Void> killAll(boolean leaderExited) {
    if (!leaderExited) {
      killedByRuntime = true;
      sent.add(ExitCode.SIGKILL);
    }
    Process process = leader;
    long group = pgid;
    return CompletableFuture.runAsync(() -> ProcessGroup.killAll(group, process.toHandle()), io);
  }

  /**
   * The leader has exited: whether its group is empty, by one {@code kill(2)} of SIGKILL to the
   * group ({@code ESRCH}: no process left, not even a zombie; an empty group gains no member). Made
   * on the caller's thread, the actor's: a signal is queued and the call returns at once, it reads
   * no file and waits for nothing, and it spares the common end of a run (a leader that left
   * nothing behind) two hops through the I/O executor before the exit may be reported. False when
   * something is left: it got the SIGKILL, and {@link #killAll} still kills and awaits the group.
   * (A group whose every member refuses the signal, {@code EPERM}, counts as empty, as in {@link
   * ProcessGroup#killAll}: no kill of ours could end it.)
   */
  boolean goneAfterExit() {
    return !ProcessGroup.signal(pgid, "KILL");
  }

  /** How the leader's exit status reads, given the signals sent to its group. */
  ExitCode decode(int status) {
    return ExitCode.decode(status, sent);
  }
}
