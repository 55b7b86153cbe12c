package io.capsule.runtime.run;

import io.capsule.driver.api.Bridge;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.bridge.ToolBridgeHost;
import io.capsule.runtime.bridge.ToolCallEvent;
import io.capsule.runtime.bridge.ToolWorkspace;
import io.capsule.runtime.driver.ResolvedCapsule;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;

/**
 * The run's view of its tool bridge (issue 8: started before launch, stopped before the report):
 * the {@link ToolBridgeHost} child, the bridge it reported listening, whether the run asked it to
 * stop, and the calls in flight, which keep the run's inactivity window open (the harness is
 * waiting on its own call, bounded by the bridge's call timeout).
 *
 * <p>Confined to the run's actor thread. Spawning and watching the host stay with the run; the
 * host's termination is the "bridge gone" signal ({@link #onGone()}).
 */
final class RunBridge {

  private ActorRef<ToolBridgeHost.Command> host;
  private Optional<Bridge> bridge = Optional.empty();
  private boolean stopping;
  private int callsInFlight;

  /**
   * The host of a bridge offering {@code offered}: the capsule's tools after the request's
   * narrowing ({@link ToolNarrowing}), its whole inventory, so {@code tools/list} shows only these,
   * a call to any other is refused as an unknown tool ({@code E-TOOL-002}), and the launch request
   * names only these.
   */
  static Behavior<ToolBridgeHost.Command> host(
      RunLimits limits,
      ResolvedCapsule capsule,
      Map<String, String> hostEnv,
      Path workdir,
      List<String> offered,
      Executor blocking,
      ActorRef<ToolBridgeHost.Report> run) {
    return ToolBridgeHost.create(
        limits.bridge(),
        new ToolWorkspace(
            workdir.toAbsolutePath(),
            RunDirs.grantedEnv(capsule, hostEnv),
            capsule.manifest().capabilities().filesystem().readOnly()),
        offered,
        blocking,
        run);
  }

  void spawned(ActorRef<ToolBridgeHost.Command> child) {
    host = child;
  }

  /** The host lives: the run waits for it to stop before it ends. */
  boolean hosted() {
    return host != null;
  }

  /** The listening bridge, for the launch request; empty without tools or before it listens. */
  Optional<Bridge> bridge() {
    return bridge;
  }

  void onReady(Bridge listening) {
    bridge = Optional.of(listening);
  }

  /** The outcome is decided: the bridge refuses new calls ({@code E-TOOL-003}). */
  void beginEnding() {
    if (host != null) {
      host.tell(ToolBridgeHost.BeginEnding.INSTANCE);
    }
  }

  /**
   * The bridge goes before the run's end, so the calls it kills are traced first: asks the host to
   * stop (once).
   *
   * @return true while the host has not stopped: the run waits for {@link #onGone()}
   */
  boolean stopFirst() {
    if (host == null) {
      return false;
    }
    if (!stopping) {
      stopping = true;
      host.tell(ToolBridgeHost.Stop.INSTANCE);
    }
    return true;
  }

  boolean callsInFlight() {
    return callsInFlight > 0;
  }

  /** Counts a call in or out; a refused call finishes without having started. */
  void count(ToolCallEvent e) {
    if (e instanceof ToolCallEvent.Started) {
      callsInFlight++;
    } else if (e instanceof ToolCallEvent.Finished f
        && f.status() != ToolCallEvent.CallStatus.REFUSED) {
      callsInFlight = Math.max(0, callsInFlight - 1);
    }
  }

  /**
   * The host stopped.
   *
   * @return true when nobody asked it to while a bridge was listening: the harness may still call
   *     it, so the run cannot keep its contract with the harness
   */
  boolean onGone() {
    boolean expected = stopping;
    host = null;
    stopping = false;
    callsInFlight = 0;
    return !expected && bridge.isPresent();
  }
}
