package io.capsule.runtime.bridge;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.driver.api.Bridge;
import io.capsule.runtime.core.Failures;
import io.capsule.runtime.harness.contain.RunSandbox;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The owner of one run's {@link ToolBridge} (ARCHITECTURE: ToolBridge under CapsuleRun): resolves
 * the capsule's tools, binds the bridge, tells the run {@link Ready} (or {@link Failed}), refuses
 * new calls on {@link BeginEnding}, and on {@link Stop} stops the bridge and then itself.
 *
 * <p>Contract with the run: the run watches this actor, and its termination is the "bridge gone"
 * signal. It stops only after {@link ToolBridge#stop()} completed, which is after every call the
 * bridge killed reported {@code Finished}; since those reports are told to the run before the stop
 * completes, the run has every {@link Call} of the bridge before it learns the bridge is gone. A
 * failed start tells {@link Failed} and stops. When the run stops first, this actor's {@code
 * PostStop} stops the bridge (fire and forget: the port is released and running tools are killed
 * all the same).
 *
 * <p>The start is bounded ({@link #START_BOUND}): a start that has not landed by then (the blocking
 * dispatcher or the file system is stuck) is {@link Failed} with {@code E-TOOL-009}, or, after a
 * {@link Stop}, simply the end of this actor; the run never waits on it for ever.
 *
 * <p>The bridge's listener runs on foreign threads and only {@code tell}s the run: {@link Activity}
 * for every request with the right token, {@link Call} for every call started or finished.
 */
public final class ToolBridgeHost extends AbstractBehavior<ToolBridgeHost.Command> {

  public sealed interface Command {}

  /** The run is ending: the bridge refuses calls from now on (E-TOOL-003). Idempotent. */
  public enum BeginEnding implements Command {
    INSTANCE
  }

  /** Stop the bridge, killing running calls, then stop. Idempotent; waits for a start in flight. */
  public enum Stop implements Command {
    INSTANCE
  }

  /**
   * The harness spawned: its calls run in this sandbox of the run (empty: uncontained). Sent once;
   * kept until the bridge is bound.
   */
  public record Contain(Optional<RunSandbox> sandbox) implements Command {}

  private record Bound(ToolBridge bridge, Throwable failure) implements Command {}

  private enum Unbound implements Command {
    INSTANCE
  }

  private enum StartBound implements Command {
    INSTANCE
  }

  /**
   * Bound on the start: resolving a few tools on the PATH, the read-only probe (itself bounded at
   * 10 s) and a loopback bind take milliseconds, so 30 s (a driver call's deadline) means the
   * blocking dispatcher or the disk is stuck, not slow.
   */
  static final Duration START_BOUND = Duration.ofSeconds(30);

  /** What the host and its bridge tell the run. */
  public sealed interface Report {}

  /** The bridge is listening: this goes into the launch request. */
  public record Ready(Bridge bridge) implements Report {}

  /** The bridge could not start: E-TOOL-001 (a tool does not resolve) or E-TOOL-009 (no bind). */
  public record Failed(Diagnostic diagnostic) implements Report {}

  /** A request with the right token arrived: harness activity (docs/run-semantics.md §9). */
  public enum Activity implements Report {
    INSTANCE
  }

  /** A call started or finished. */
  public record Call(ToolCallEvent event) implements Report {}

  private final ActorRef<Report> run;
  private final CompletableFuture<ToolBridge> starting;
  private final TimerScheduler<Command> timers;
  private ToolBridge bridge;
  private boolean ending;
  private boolean stopping;
  private Optional<RunSandbox> sandbox; // null until the run tells Contain

  /**
   * @param shellAllow the tools to offer: the capsule's {@code capabilities.shell.allow} after the
   *     request's {@code allowed_tools} narrowing (the bridge's whole inventory; names outside it
   *     are unknown tools), resolved on {@code workspace.env()}'s PATH off the actor thread
   * @param blocking where the tools are resolved (file system checks)
   */
  public static Behavior<Command> create(
      BridgeConfig config,
      ToolWorkspace workspace,
      List<String> shellAllow,
      Executor blocking,
      ActorRef<Report> run) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new ToolBridgeHost(ctx, timers, config, workspace, shellAllow, blocking, run)));
  }

  private ToolBridgeHost(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      BridgeConfig config,
      ToolWorkspace workspace,
      List<String> shellAllow,
      Executor blocking,
      ActorRef<Report> run) {
    super(ctx);
    this.run = run;
    this.timers = timers;
    List<String> allow = List.copyOf(shellAllow);
    ToolBridge.Listener listener =
        new ToolBridge.Listener() {
          @Override
          public void onActivity() {
            run.tell(Activity.INSTANCE);
          }

          @Override
          public void onCall(ToolCallEvent event) {
            run.tell(new Call(event));
          }
        };
    var system = ctx.getSystem();
    this.starting =
        CompletableFuture.supplyAsync(() -> ShellTool.resolveAll(allow, workspace.env()), blocking)
            .thenCompose(tools -> ToolBridge.start(system, config, workspace, tools, listener));
    ctx.pipeToSelf(starting, Bound::new);
    timers.startSingleTimer(StartBound.INSTANCE, START_BOUND);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Bound.class, this::onBound)
        .onMessage(Contain.class, this::onContain)
        .onMessageEquals(BeginEnding.INSTANCE, this::onBeginEnding)
        .onMessageEquals(Stop.INSTANCE, this::onStop)
        .onMessageEquals(Unbound.INSTANCE, Behaviors::stopped)
        .onMessageEquals(StartBound.INSTANCE, this::onStartBound)
        .onSignal(PostStop.class, s -> onPostStop())
        .build();
  }

  private Behavior<Command> onBound(Bound b) {
    timers.cancel(StartBound.INSTANCE);
    if (b.failure() != null) {
      Throwable cause = Failures.unwrap(b.failure());
      Diagnostic d =
          cause instanceof DiagnosticException de
              ? de.diagnostic()
              : Diagnostic.of(Code.E_TOOL_009, "the tool bridge could not start: " + cause);
      if (!stopping) {
        run.tell(new Failed(d));
      }
      return Behaviors.stopped();
    }
    bridge = b.bridge();
    if (stopping) {
      return stopBridge();
    }
    if (ending) {
      bridge.beginEnding();
    }
    if (sandbox != null) {
      bridge.contain(sandbox);
    }
    run.tell(new Ready(bridge.toBridge()));
    return this;
  }

  private Behavior<Command> onContain(Contain c) {
    if (sandbox == null) {
      sandbox = c.sandbox();
      if (bridge != null) {
        bridge.contain(sandbox);
      }
    }
    return this;
  }

  /** The start did not land in time: given up (a bridge landing later is stopped on PostStop). */
  private Behavior<Command> onStartBound() {
    if (bridge != null) {
      return this; // it landed, and its Bound is already handled
    }
    if (!stopping) {
      run.tell(
          new Failed(
              Diagnostic.of(
                  Code.E_TOOL_009,
                  "the tool bridge did not start within "
                      + START_BOUND.toSeconds()
                      + " s (the blocking dispatcher or the disk is stuck)")));
    }
    return Behaviors.stopped();
  }

  private Behavior<Command> onBeginEnding() {
    ending = true;
    if (bridge != null) {
      bridge.beginEnding();
    }
    return this;
  }

  private Behavior<Command> onStop() {
    if (stopping) {
      return this;
    }
    stopping = true;
    ending = true;
    return bridge == null ? this : stopBridge(); // a start in flight stops when it lands
  }

  private Behavior<Command> stopBridge() {
    bridge.beginEnding();
    getContext().pipeToSelf(bridge.stop(), (done, failure) -> Unbound.INSTANCE);
    return this;
  }

  private Behavior<Command> onPostStop() {
    if (bridge != null) {
      bridge.stop(); // idempotent; already stopped on the Stop path
    } else {
      // Stopped while binding: the bridge that lands later must not outlive the run.
      starting.thenAccept(ToolBridge::stop);
    }
    return this;
  }
}
