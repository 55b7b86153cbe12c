package io.capsule.runtime.harness;

/**
 * When {@link HarnessProcess} may report its harness's exit (docs/run-semantics.md §9): the leader
 * exited, stderr ended and every stdin write and interrupt signal settled (or the drain bound ran
 * out), no kill is in flight, and the whole group has been killed, so nothing the leader left
 * behind outlives the report. Reported once. Pure: the actor tells it what happened and asks {@link
 * #next()}.
 */
final class ExitGate {

  /** What the actor does about the exit now. */
  enum Next {
    /** Something is still open (or the exit is not known, or already reported). */
    WAIT,
    /** Everything settled but the group may still hold the leader's children: kill it first. */
    KILL_GROUP,
    /** Report the exit now. */
    REPORT
  }

  private Integer exitValue;
  private boolean stderrDone;
  private boolean drainElapsed;
  private int stdinWrites;
  private int signalsInFlight;
  private boolean killInFlight;
  private boolean groupKilled;
  private boolean reported;

  /**
   * The leader exited.
   *
   * @return true when something is still open: the actor starts the drain bound
   */
  boolean onExited(int value) {
    exitValue = value;
    return !stderrDone || stdinWrites > 0 || signalsInFlight > 0;
  }

  boolean exited() {
    return exitValue != null;
  }

  void onStderrDone() {
    stderrDone = true;
  }

  /** The drain bound ran out: report without waiting for what is still open. */
  void onDrainElapsed() {
    drainElapsed = true;
  }

  void stdinWriteStarted() {
    stdinWrites++;
  }

  void stdinWriteSettled() {
    stdinWrites--;
  }

  void signalStarted() {
    signalsInFlight++;
  }

  void signalSettled() {
    signalsInFlight--;
  }

  void killStarted() {
    killInFlight = true;
  }

  /** The whole group was killed (on request, or after the leader was gone). */
  void killDone() {
    killInFlight = false;
    groupKilled = true;
  }

  /**
   * After {@link Next#KILL_GROUP}: the exited leader's group was found empty, so no kill is needed
   * (it counts as killed: nothing of the group is left to outlive the report).
   */
  void groupFoundGone() {
    groupKilled = true;
  }

  Next next() {
    // Interrupt answers come before the exit, so the listener never waits for one after it.
    boolean drained = stderrDone && stdinWrites == 0 && signalsInFlight == 0;
    if (reported || exitValue == null || killInFlight || !(drained || drainElapsed)) {
      return Next.WAIT;
    }
    return groupKilled ? Next.REPORT : Next.KILL_GROUP;
  }

  /** Marks the exit reported and returns the leader's raw exit value. */
  int report() {
    reported = true;
    return exitValue;
  }

  boolean reported() {
    return reported;
  }
}
