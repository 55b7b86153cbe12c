package io.capsule.runtime.run;

import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.runtime.driver.Driver;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The run's view of its {@link Driver} child: the child's ref and the one call in flight that the
 * run must wait for before it may end ({@code parse} of a batch, or {@code classify-exit}). Every
 * call is answered to the run's one reply adapter.
 *
 * <p>Confined to the run's actor thread. Spawning and watching stay with the run. When the driver
 * is gone, a call is not sent and not waited for; a dropped batch must still be acknowledged to the
 * harness by the caller, so the harness's output keeps draining to its end.
 */
final class RunDriver {

  private final ActorRef<Driver.Reply> replies;
  private ActorRef<Driver.Command> ref;
  private boolean parsing;
  private boolean classifying;

  RunDriver(ActorRef<Driver.Reply> replies) {
    this.replies = replies;
  }

  void spawned(ActorRef<Driver.Command> child) {
    ref = child;
  }

  boolean present() {
    return ref != null;
  }

  /** A parse or a classify-exit is in flight: its answer decides what happens next. */
  boolean busy() {
    return parsing || classifying;
  }

  boolean classifying() {
    return classifying;
  }

  void launch(LaunchRequest request) {
    ref.tell(new Driver.Launch(request, replies));
  }

  /**
   * @return false when there is no driver: the batch is dropped, and the caller acknowledges it
   */
  boolean parse(List<String> lines) {
    parsing = true;
    return tell(new Driver.Parse(lines, replies));
  }

  void classify(ExitStatus exit) {
    classifying = true;
    tell(new Driver.ClassifyExit(exit, replies));
  }

  void onParsed() {
    parsing = false;
  }

  void onClassified() {
    classifying = false;
  }

  /**
   * The driver failed or its actor stopped: nothing is in flight any more.
   *
   * @return true when a batch was being parsed: the caller acknowledges it
   */
  boolean onGone() {
    boolean wasParsing = parsing;
    ref = null;
    parsing = false;
    classifying = false;
    return wasParsing;
  }

  private boolean tell(Driver.Command c) {
    if (ref != null) {
      ref.tell(c);
      return true;
    }
    parsing = false;
    classifying = false;
    return false;
  }
}
