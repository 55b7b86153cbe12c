package io.capsule.runtime;

import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.harness.HarnessProcess;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The run's view of its {@link HarnessProcess} child (docs/run-semantics.md §9): the child's ref,
 * what it reported (exit, end of stdout, a failed stdin write), what the run told it (close stdin,
 * kill, each at most once) and the group's three bounds, which are the run's timers: the terminal
 * grace (stdin closed, then a kill), the interrupt grace (absolute: output does not extend it) and
 * the drain bound (the leader exited with stdout still open: a kill, then the run stops waiting).
 * It answers the run's one question before a report: is the group gone and its output drained
 * ({@link #settled()})?
 *
 * <p>Confined to the run's actor thread. Spawning and watching the child stay with the run.
 */
final class RunHarness {

  private final TimerScheduler<CapsuleRun.Command> timers;
  private final RunLimits limits;

  private ActorRef<HarnessProcess.Command> ref;
  private HarnessProcess.Exited exited;
  private boolean stdoutEnded;
  private boolean drainElapsed;
  private boolean killSent;
  private boolean graceStarted;
  private Optional<Diagnostic> stdinFailure = Optional.empty();

  RunHarness(TimerScheduler<CapsuleRun.Command> timers, RunLimits limits) {
    this.timers = timers;
    this.limits = limits;
  }

  void spawned(ActorRef<HarnessProcess.Command> child) {
    ref = child;
  }

  /** A child is there to talk to. */
  boolean present() {
    return ref != null;
  }

  /** Spawned and not yet exited. */
  boolean running() {
    return ref != null && exited == null;
  }

  /** A harness was spawned in this run (it may be gone by now). */
  boolean spawned() {
    return ref != null || exited != null;
  }

  /** The group exited and stdout ended, or the run stopped waiting for stdout's end. */
  boolean settled() {
    return exited != null && (stdoutEnded || drainElapsed);
  }

  /** The run stopped waiting for stdout's end (killed, and still open past the bound). */
  boolean drainGivenUp() {
    return drainElapsed;
  }

  HarnessProcess.Exited exit() {
    return exited;
  }

  Optional<Diagnostic> stdinFailure() {
    return stdinFailure;
  }

  /** Terminal event or EOF: closes stdin and starts the terminal grace, once, while it runs. */
  void startTerminalGrace() {
    if (running() && !graceStarted && !killSent) {
      graceStarted = true;
      ref.tell(new HarnessProcess.CloseStdin());
      timers.startSingleTimer(CapsuleRun.Tick.TERMINAL_GRACE, limits.terminalGrace());
    }
  }

  /** Kills the group, once, while the harness runs. */
  void kill(String cause) {
    if (running() && !killSent) {
      killSent = true;
      ref.tell(new HarnessProcess.Kill(cause));
    }
  }

  /**
   * The drain bound elapsed (stdout still open after the exit): the first time the group is killed
   * and the bound starts again; after that the run stops waiting for stdout's end.
   *
   * @return true when the run stopped waiting: it may settle now
   */
  boolean onDrainBound() {
    if (!killSent && ref != null) {
      killSent = true;
      ref.tell(new HarnessProcess.Kill("stdout still open after the harness exited"));
      timers.startSingleTimer(CapsuleRun.Tick.DRAIN_BOUND, limits.terminalGrace());
      return false;
    }
    drainElapsed = true;
    return true;
  }

  void interrupt(InterruptMethod method, Optional<byte[]> stdin) {
    ref.tell(new HarnessProcess.Interrupt(method, stdin));
  }

  /** The run is done with a batch of lines (parsed or dropped): the next one may come. */
  void batchHandled() {
    if (ref != null) {
      ref.tell(new HarnessProcess.BatchHandled());
    }
  }

  /** An interrupt was delivered: the harness has the interrupt grace to end, then is killed. */
  void startInterruptGrace() {
    timers.startSingleTimer(CapsuleRun.Tick.INTERRUPT_GRACE, limits.interruptGrace());
  }

  void onExited(HarnessProcess.Exited x) {
    exited = x;
    timers.cancel(CapsuleRun.Tick.TERMINAL_GRACE);
    timers.cancel(CapsuleRun.Tick.INTERRUPT_GRACE);
    if (!stdoutEnded) {
      // The leader exited but stdout is still open (a child holds it, or lines are still in the
      // pipe): give it the terminal grace to end, then kill the group (docs/run-semantics.md §9).
      timers.startSingleTimer(CapsuleRun.Tick.DRAIN_BOUND, limits.terminalGrace());
    }
  }

  void onStdoutEnded() {
    stdoutEnded = true;
  }

  void onStdinFailed(Diagnostic d) {
    stdinFailure = Optional.of(d);
  }

  void onSpawnFailed() {
    ref = null;
  }

  /**
   * The child actor stopped.
   *
   * @return true when the harness was still running: the actor failed, its {@code PostStop} killed
   *     the group, and no exit will be reported, so one is recorded here as killed
   */
  boolean onChildStopped() {
    boolean wasRunning = running();
    ref = null;
    if (wasRunning) {
      exited = new HarnessProcess.Exited(Optional.empty(), Optional.empty(), "", true);
      stdoutEnded = true;
    }
    return wasRunning;
  }
}
