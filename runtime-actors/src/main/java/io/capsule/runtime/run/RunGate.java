package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.ExitStatus;
import io.capsule.runtime.core.Ending;
import java.util.Optional;

/**
 * How a run ends (docs/run-semantics.md §9), as one pure decision: the run tells it what happened
 * (an ending decided, a cancel, the harness's spawn, exit, end of stdout and failed stdin write,
 * the driver's calls and departure, the bridge's start and stop, a timer that fired) and asks
 * {@link #next()} what to do now. Each answer other than {@link Wait} is given once and counts as
 * carried out; the run asks again until it gets {@link Wait} or {@link Finish}.
 *
 * <p>The rules, in the order {@link #next()} applies them:
 *
 * <ol>
 *   <li>The first ending decided wins, except a cancel, after which the outcome is canceled
 *       whatever follows; a cancel after the outcome is decided changes nothing.
 *   <li>A decided ending stops the harness: a terminal event closes stdin and gives it the terminal
 *       grace; every other ending kills the group at once. The end of stdout closes stdin with the
 *       same grace. A grace that elapses kills.
 *   <li>The leader exited with stdout still open: wait the drain bound, kill, wait it once more,
 *       then stop waiting for stdout.
 *   <li>No report while a driver call is in flight (a classify, or any batch sent to parse), nor
 *       while the spawned harness's group is not gone and drained.
 *   <li>The harness gone with no terminal event: a failed stdin write ends the run {@code
 *       E-RUN-007} (unless canceled); otherwise the driver classifies the exit ({@code interrupted}
 *       when canceled); with no driver left, the run fails {@code E-RUN-034}.
 *   <li>The bridge stops before the report, so the calls it kills are traced first.
 *   <li>Then the run finishes, once, with the outcome decided.
 * </ol>
 *
 * <p>No threads, no actors: table-tested in {@code RunGateTest}.
 */
final class RunGate {

  /** What the run does now. */
  sealed interface Decision {}

  /** Nothing to do until the next fact. */
  enum Wait implements Decision {
    INSTANCE
  }

  /** Close the harness's stdin and start the terminal grace. */
  enum CloseStdin implements Decision {
    INSTANCE
  }

  /** Kill the harness's process group. */
  record Kill(String cause) implements Decision {}

  /** Start (or restart) the drain bound: the leader exited while stdout is still open. */
  enum AwaitDrain implements Decision {
    INSTANCE
  }

  /** Ask the driver to classify this exit. */
  record Classify(ExitStatus exit) implements Decision {}

  /** Decide this ending (the gate found it; the run records it like any other). */
  record Fail(Ending ending) implements Decision {}

  /** Ask the bridge to stop; the run waits for it to be gone. */
  enum StopBridge implements Decision {
    INSTANCE
  }

  /** Finish with this ending; {@code spawned} tells whether a harness ran. */
  record Finish(Ending ending, boolean spawned) implements Decision {}

  /** The harness's exit as the gate needs it. */
  record Exit(Optional<Integer> code, Optional<Integer> signal, String stderrTail) {}

  private Optional<Ending> ending = Optional.empty();
  private Optional<Ending.Canceled> canceled = Optional.empty();
  private boolean finished;

  // The harness.
  private boolean harnessLive;
  private Exit exit;
  private boolean stdoutEnded;
  private boolean drainBoundStarted;
  private boolean drainElapsed;
  private boolean closeWanted;
  private boolean closeSent;
  private Optional<String> killWanted = Optional.empty();
  private boolean killSent;
  private Optional<Diagnostic> stdinFailure = Optional.empty();

  // The driver.
  private boolean driverPresent;
  private int parsing; // batches sent to the driver and not yet parsed
  private boolean classifying;

  // The bridge.
  private boolean bridgeHosted;
  private boolean bridgeListening;
  private boolean bridgeStopping;
  private int callsInFlight;

  // --- facts: the outcome ---------------------------------------------------------------------

  /**
   * An ending was decided (by the ledger, a limit, a failure).
   *
   * @return true when it is the first: the run records it (ledger, trace, bridge refuses calls)
   */
  boolean decide(Ending e) {
    if (ending.isPresent() || finished) {
      return false;
    }
    ending = Optional.of(e);
    if (e.killAtOnce()) {
      requestKill(e.cause());
    } else {
      closeWanted = true;
    }
    return true;
  }

  /**
   * The task was canceled.
   *
   * @return false when the outcome was already decided: a late cancel changes nothing
   */
  boolean cancel(String reason) {
    if (over()) {
      return false;
    }
    canceled = Optional.of(new Ending.Canceled(reason));
    return true;
  }

  /** Finished, or an ending or a cancel is decided: nothing new may start. */
  boolean over() {
    return finished || ending.isPresent() || canceled.isPresent();
  }

  boolean finished() {
    return finished;
  }

  boolean canceled() {
    return canceled.isPresent();
  }

  // --- facts: the harness ---------------------------------------------------------------------

  void harnessSpawned() {
    harnessLive = true;
  }

  /** The spawn failed: no harness ran (the run decides {@code E-RUN-007} itself). */
  void spawnFailed() {
    harnessLive = false;
  }

  /** A harness actor is there to talk to (spawned, not stopped). */
  boolean harnessPresent() {
    return harnessLive;
  }

  /** A harness was spawned in this run (it may be gone by now). */
  boolean spawned() {
    return harnessLive || exit != null;
  }

  /** Spawned and not yet exited. */
  boolean harnessRunning() {
    return harnessLive && exit == null;
  }

  /** Output arriving now is parsed (not after the run stopped waiting for it). */
  boolean acceptsLines() {
    return !classifying && !finished && !drainElapsed;
  }

  /** Harness activity (a line, a bridge request) keeps the inactivity window open. */
  boolean activityCounts() {
    return harnessRunning() && acceptsLines();
  }

  void stdoutEnded() {
    stdoutEnded = true;
    closeWanted = true;
  }

  void exited(Exit x) {
    exit = x;
  }

  /** A stdin write failed: a terminal event still wins; only an exit without one fails on it. */
  void stdinFailed(Diagnostic d) {
    stdinFailure = Optional.of(d);
  }

  /** A grace elapsed, or an interrupt could not be delivered: kill the group. */
  void requestKill(String cause) {
    if (killWanted.isEmpty()) {
      killWanted = Optional.of(cause);
    }
  }

  /** The drain bound elapsed: the first time the group is killed, after that stop waiting. */
  void drainBoundElapsed() {
    if (!killSent && harnessLive) {
      requestKill("stdout still open after the harness exited");
      drainBoundStarted = false; // once more, after the kill
    } else {
      drainElapsed = true;
    }
  }

  /**
   * The harness's actor stopped.
   *
   * @return true when the harness was still running: the actor failed and its {@code PostStop}
   *     killed the group; the run decides {@code E-RUN-007}
   */
  boolean harnessStopped() {
    boolean wasRunning = harnessRunning();
    harnessLive = false;
    if (wasRunning) {
      exit = new Exit(Optional.empty(), Optional.empty(), "");
      stdoutEnded = true;
    }
    return wasRunning;
  }

  // --- facts: the driver ----------------------------------------------------------------------

  void driverSpawned() {
    driverPresent = true;
  }

  /**
   * A batch goes to the driver (which may still be parsing the ones before it).
   *
   * @return false when there is no driver: the batch is dropped and must be acknowledged
   */
  boolean parseStarted() {
    if (driverPresent) {
      parsing++;
    }
    return driverPresent;
  }

  /** The oldest batch sent to the driver is parsed. */
  void parsed() {
    parsing = Math.max(0, parsing - 1);
  }

  void classified() {
    classifying = false;
  }

  boolean classifying() {
    return classifying;
  }

  /**
   * The driver failed or its actor stopped.
   *
   * @return how many batches were sent to it and not parsed: the run acknowledges each, since the
   *     driver answers none of them now
   */
  int driverGone() {
    int unparsed = parsing;
    driverPresent = false;
    parsing = 0;
    classifying = false;
    return unparsed;
  }

  /** A call was in flight (the driver's departure then is a failure). */
  boolean driverBusy() {
    return parsing > 0 || classifying;
  }

  boolean driverPresent() {
    return driverPresent;
  }

  // --- facts: the bridge ----------------------------------------------------------------------

  void bridgeSpawned() {
    bridgeHosted = true;
  }

  void bridgeListening() {
    bridgeListening = true;
  }

  boolean bridgeHosted() {
    return bridgeHosted;
  }

  void callStarted() {
    callsInFlight++;
  }

  void callFinished() {
    callsInFlight = Math.max(0, callsInFlight - 1);
  }

  /** The harness waits on its own call (bounded by the bridge): silence is not inactivity. */
  boolean callsInFlight() {
    return callsInFlight > 0;
  }

  /**
   * The bridge's host stopped.
   *
   * @return true when nobody asked it to while it listened: the harness may still call it, so the
   *     run cannot keep its contract ({@code E-TOOL-009}) unless the outcome is decided already
   */
  boolean bridgeGone() {
    boolean unexpected = !bridgeStopping && bridgeListening;
    bridgeHosted = false;
    bridgeStopping = false;
    callsInFlight = 0;
    return unexpected && !over();
  }

  // --- the decision ---------------------------------------------------------------------------

  /** What to do now; anything but {@link Wait} counts as done once returned. */
  Decision next() {
    if (finished) {
      return Wait.INSTANCE;
    }
    Decision toHarness = harnessStep();
    if (toHarness != null) {
      return toHarness;
    }
    if (driverBusy()) {
      return Wait.INSTANCE;
    }
    boolean spawned = spawned();
    if (spawned && !(exit != null && (stdoutEnded || drainElapsed))) {
      return Wait.INSTANCE; // the group must be gone and drained before the report
    }
    if (spawned && ending.isEmpty()) {
      if (stdinFailure.isPresent() && canceled.isEmpty()) {
        return new Fail(new Ending.HarnessFailed(stdinFailure.get()));
      }
      if (driverPresent) {
        classifying = true;
        return new Classify(
            new ExitStatus(
                exit.code(), exit.signal(), exit.stderrTail(), canceled.isPresent(), false));
      }
    }
    Optional<Ending> decided = canceled.map(Ending.class::cast).or(() -> ending);
    if (decided.isEmpty()) {
      if (!spawned) {
        return Wait.INSTANCE; // still starting
      }
      decided =
          Optional.of(
              new Ending.DriverFailed(
                  Diagnostic.of(Code.E_RUN_034, "the run ended with no outcome")));
    }
    if (bridgeHosted) {
      if (bridgeStopping) {
        return Wait.INSTANCE;
      }
      bridgeStopping = true;
      return StopBridge.INSTANCE;
    }
    finished = true;
    return new Finish(decided.get(), spawned);
  }

  /** What the harness is told now: a kill wins over closing stdin; each is sent at most once. */
  private Decision harnessStep() {
    if (harnessRunning()) {
      if (killWanted.isPresent() && !killSent) {
        killSent = true;
        return new Kill(killWanted.get());
      }
      if (closeWanted && !closeSent && !killSent) {
        closeSent = true;
        return CloseStdin.INSTANCE;
      }
    }
    if (harnessLive && exit != null && !stdoutEnded && !drainElapsed) {
      if (killWanted.isPresent() && !killSent) {
        killSent = true;
        return new Kill(killWanted.get());
      }
      if (!drainBoundStarted) {
        drainBoundStarted = true;
        return AwaitDrain.INSTANCE;
      }
    }
    return null;
  }
}
