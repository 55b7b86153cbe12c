package io.capsule.runtime.harness;

import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.harness.contain.Containment;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.EgressProxy;
import io.capsule.runtime.harness.contain.RunSandbox;
import io.capsule.runtime.metrics.RuntimeMetrics;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.stream.Materializer;

/**
 * Owns one harness OS process group (docs/run-semantics.md §4, §5, §9): spawns it from an {@link
 * AppliedLaunch}, feeds stdin, streams stdout as acknowledged line batches, keeps stderr's tail,
 * delivers interrupts and kills the whole group.
 *
 * <p>The harness is started through {@code setsid(1)}, so it leads a new session and process group
 * whose id is its pid; signals go to the group, which also reaches children that outlive their
 * parent. Nothing of the JVM's environment is inherited: the environment is exactly the applied
 * one.
 *
 * <p>Containment ({@link HarnessLimits#containment()}, package {@code harness.contain}): unless
 * off, the spawn first decides it ({@link ContainmentDecided}, with {@code W-CAP-050} when {@code
 * auto} finds no working sandbox; {@code required} without one is a {@link SpawnFailed} with {@code
 * E-CAP-051}); contained, the group leader is {@code bwrap} and the harness runs inside its PID
 * namespace, so every process it starts dies with the sandbox, and SIGINT to the group reaches the
 * harness while {@code bwrap} ignores it. The run's egress proxy lives as long as this actor; its
 * refusals come as {@link EgressRefused}.
 *
 * <p>Its parts: {@link HarnessSpawn} starts and releases the group, {@link HarnessPumps} read
 * stdout and stderr (and say what a leader's exit does to the pipes), {@link HarnessOutput} turns
 * them into events with back-pressure (at most {@link HarnessLimits#batchesInFlight()} batches
 * waiting for the listener's {@link BatchHandled}), {@link StdinPipe} feeds stdin, {@link
 * GroupSignals} sends the interrupt and the kill (and remembers what it sent, which decides how the
 * exit reads), and {@link ExitGate} says when the exit may be reported.
 *
 * <p>Timers: the listener (the run) owns every run timer (terminal grace, interrupt grace,
 * inactivity); this actor owns only the drain bound after the exit: {@link Exited} waits until
 * stderr has ended and pending stdin writes have settled, or until that bound.
 *
 * <p>Lifecycle: it stops itself once it has sent both {@link Exited} and {@link StdoutEnded} and
 * its stdout pump has finished, every batch acknowledged (or after {@link SpawnFailed}). On {@code
 * PostStop} and {@code PreRestart} it kills the whole group and closes the pipes, so no process of
 * the group outlives it. Spawn it with the default (stop) supervision: a restart would spawn the
 * harness again.
 *
 * <p>Threading: process waits, pipe I/O, spawns and signals run on the I/O dispatcher; those
 * threads only send messages to this actor (or complete futures the actor created). One signal is
 * sent from the actor's thread: after the leader's exit, the {@code kill(2)} that finds its group
 * empty ({@link GroupSignals#goneAfterExit}: a system call that never waits).
 *
 * <p>Over 400 lines because it is one actor over one process group, and a quarter of it is its
 * nested protocol (the events the run relies on, each with its contract). The parts with their own
 * state are split out (above); what stays is the routing of the group's dozen lifecycle messages,
 * which share the process, the signals and the gate and would only call back into each other if
 * split further.
 */
public final class HarnessProcess extends AbstractBehavior<HarnessProcess.Command> {

  /** What the run may send, and what this actor sends itself. */
  public sealed interface Command {}

  /**
   * Interrupt the turn in progress by the driver's method: {@code stdin-message} writes {@code
   * stdinBytes} (else the plan's {@code interrupt-stdin}) to the still-open stdin; {@code
   * signal-int} sends SIGINT to the process group; {@code unsupported} does nothing. Answered with
   * {@link InterruptResult}.
   */
  public record Interrupt(InterruptMethod method, Optional<byte[]> stdinBytes) implements Command {
    public Interrupt {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(stdinBytes, "stdinBytes");
    }
  }

  /** Close the harness's stdin (after pending writes). Idempotent. */
  public record CloseStdin() implements Command {}

  /** SIGKILL the whole process group. Idempotent; the cause is logged. */
  public record Kill(String cause) implements Command {
    public Kill {
      Objects.requireNonNull(cause, "cause");
    }
  }

  /**
   * The listener handled the oldest {@link Lines} it has not acknowledged yet: one more batch may
   * come. Up to {@link HarnessLimits#batchesInFlight()} batches arrive before the first is
   * acknowledged; the listener acknowledges each once, in the order they came.
   */
  public record BatchHandled() implements Command {}

  private record SpawnResult(HarnessSpawn.Started started, Throwable failure) implements Command {}

  /** The egress proxy refused a connection (told on a proxy thread). */
  private record Refused(String host, int port, String reason, long refusedSoFar)
      implements Command {}

  private record StdoutBatch(List<LineFramer.Line> lines, CompletableFuture<Done> ack)
      implements Command {}

  /** stdout reached EOF after {@code batches} batches (the pump's {@code stdoutEnded}). */
  private record StdoutEof(long batches, Throwable failure) implements Command {}

  private record StdoutDone(Throwable failure) implements Command {}

  private record StderrChunk(byte[] bytes, CompletableFuture<Done> ack) implements Command {}

  private record StderrDone() implements Command {}

  private record ProcessExited(int exitValue) implements Command {}

  private enum CheckLimits implements Command {
    INSTANCE
  }

  /** A breach check done; {@code then} is the exit it was made for, or null for a periodic one. */
  private record LimitsChecked(Optional<Diagnostic> breach, ProcessExited then)
      implements Command {}

  /**
   * How often a contained harness's limits are read while it runs: a fork bomb does not end the
   * harness by itself (its forks just fail), so the run learns of it from this; 1 s is well under
   * any run's inactivity window and costs two small sysfs reads.
   */
  static final Duration LIMITS_CHECK = Duration.ofSeconds(1);

  private static final Object LIMITS_TIMER = "limits";

  private record StdinWritten(boolean initial, boolean interrupt, Throwable failure)
      implements Command {}

  private record SignalSent(boolean delivered) implements Command {}

  private record KillDone() implements Command {}

  private enum StderrDrainElapsed implements Command {
    INSTANCE
  }

  /** What the listener receives. */
  public sealed interface Event {}

  /**
   * Whether the harness runs in the sandbox (README "Containment"); sent once, before {@link
   * Spawned}, unless containment is off. {@code warning} is {@code W-CAP-050} when {@code auto}
   * found no working sandbox.
   */
  public record ContainmentDecided(
      String mode, boolean contained, Optional<Diagnostic> warning, List<Diagnostic> limitWarnings)
      implements Event {
    public ContainmentDecided {
      limitWarnings = List.copyOf(limitWarnings);
    }
  }

  /**
   * The run's processes passed a resource limit the kernel enforces ({@code E-RUN-047} memory,
   * {@code E-RUN-048} processes, docs/containment.md "Resources"): told once, before {@link Exited}
   * when the breach ended the harness. The run decides; the harness is not killed here.
   */
  public record LimitPassed(Diagnostic diagnostic) implements Event {}

  /**
   * The contained harness's egress proxy refused {@code host:port} with a 403 ({@code W-CAP-052}).
   * The first {@link #REFUSALS_TOLD} are told one by one, after that every hundredth (with the
   * count so far), so a harness retrying in a loop cannot flood the run.
   */
  public record EgressRefused(String host, int port, String reason, long refusedSoFar)
      implements Event {}

  /** How many refusals are told one by one before only every hundredth is. */
  public static final int REFUSALS_TOLD = 10;

  /**
   * The harness runs; its process group id equals its pid. {@code sandbox} is the run's sandbox
   * when contained: the run starts its bridged tools in it (docs/containment.md).
   */
  public record Spawned(long pid, long pgid, Optional<RunSandbox> sandbox) implements Event {}

  /** The harness could not be started ({@code E-RUN-007}); the actor stops. */
  public record SpawnFailed(Diagnostic diagnostic) implements Event {}

  /**
   * Writing the initial stdin failed (sent before {@link Exited} unless the drain bound ran out)
   * ({@code E-RUN-007}), e.g. the harness exited without reading it. Not sent for writes cut short
   * by {@link Kill}; the run decides what it means.
   */
  public record StdinFailed(Diagnostic diagnostic) implements Event {}

  /**
   * The next lines of stdout, in order; answer each with one {@link BatchHandled}, in order. The
   * next batch may come before this one is answered (see {@link HarnessLimits#batchesInFlight()}).
   */
  public record Lines(List<String> lines) implements Event {
    public Lines {
      lines = List.copyOf(lines);
    }
  }

  /** A line of the next {@link Lines} was longer than the cap and was cut (for the trace). */
  public record LineCut(String note) implements Event {}

  /**
   * stdout reached EOF (or failed to read, which is logged); no more {@link Lines} follow. Sent
   * right after the last {@link Lines}, before the listener has acknowledged it.
   */
  public record StdoutEnded() implements Event {}

  /** Whether the last {@link Interrupt} reached the harness; sent before {@link Exited}. */
  public record InterruptResult(boolean delivered) implements Event {}

  /**
   * The harness (the group leader) exited. The JDK reports a death by signal N as 128+N; a status
   * of 129..192 is reported as that signal and no code only when this actor sent that signal to the
   * group while the harness ran, else as that code (see {@code ExitCode}).
   *
   * @param killedByRuntime a {@link Kill} (or the actor's stop) arrived while it was running
   */
  public record Exited(
      Optional<Integer> code, Optional<Integer> signal, String stderrTail, boolean killedByRuntime)
      implements Event {}

  private static final Object DRAIN_TIMER = "stderr-drain";

  private final AppliedLaunch launch;
  private final ActorRef<Event> listener;
  private final ActorRef<Command> self;
  private final HarnessLimits limits;
  private final TimerScheduler<Command> timers;
  private final Executor io;
  private final HarnessOutput output;
  private final CompletableFuture<HarnessSpawn.Started> spawning;
  private final ExitGate exit = new ExitGate();

  private final GroupSignals signals;

  private Process process;
  private boolean stdoutDone; // the pump finished: no acknowledgement is awaited any more
  private boolean limitTold; // LimitPassed was told: at most once
  private HarnessSpawn.Started started;
  private HarnessPumps pumps;
  private StdinPipe stdin;

  public static Behavior<Command> create(
      AppliedLaunch launch, ActorRef<Event> listener, HarnessLimits limits) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> new HarnessProcess(context, timers, launch, listener, limits)));
  }

  private HarnessProcess(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      AppliedLaunch launch,
      ActorRef<Event> listener,
      HarnessLimits limits) {
    super(context);
    this.launch = launch;
    this.listener = listener;
    this.self = context.getSelf();
    this.limits = limits;
    this.timers = timers;
    this.io =
        context
            .getSystem()
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig(limits.ioDispatcher()));
    this.output = new HarnessOutput(listener, limits);
    this.signals = new GroupSignals(io);
    EgressProxy.Refusals refusals =
        (host, port, reason, count) -> self.tell(new Refused(host, port, reason, count));
    RuntimeMetrics metrics = RuntimeMetrics.get(context.getSystem()); // looked up on this thread
    this.spawning =
        CompletableFuture.supplyAsync(
            () ->
                metrics.timeSpawn(() -> HarnessSpawn.start(launch, limits.containment(), refusals)),
            io);
    context.pipeToSelf(spawning, (p, failure) -> new SpawnResult(p, unwrap(failure)));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(SpawnResult.class, this::onSpawnResult)
        .onMessage(StdoutBatch.class, this::onStdoutBatch)
        .onMessage(BatchHandled.class, m -> then(output::batchHandled))
        .onMessage(StdoutEof.class, this::onStdoutEof)
        .onMessage(StdoutDone.class, this::onStdoutDone)
        .onMessage(StderrChunk.class, this::onStderrChunk)
        .onMessage(StderrDone.class, m -> onStderrDone())
        .onMessage(ProcessExited.class, this::onProcessExited)
        .onMessageEquals(CheckLimits.INSTANCE, this::onCheckLimits)
        .onMessage(LimitsChecked.class, this::onLimitsChecked)
        .onMessage(Interrupt.class, this::onInterrupt)
        .onMessage(SignalSent.class, this::onSignalSent)
        .onMessage(StdinWritten.class, this::onStdinWritten)
        .onMessage(CloseStdin.class, m -> onCloseStdin())
        .onMessage(Kill.class, this::onKill)
        .onMessage(Refused.class, this::onRefused)
        .onMessage(KillDone.class, m -> onKillDone())
        .onMessageEquals(StderrDrainElapsed.INSTANCE, this::onDrainElapsed)
        .onSignal(PostStop.class, s -> releaseAll())
        .onSignal(PreRestart.class, s -> releaseAll())
        .build();
  }

  /** Runs a step of a collaborator; the behaviour stays the same. */
  private Behavior<Command> then(Runnable step) {
    step.run();
    return this;
  }

  // --- spawn ---

  private Behavior<Command> onSpawnResult(SpawnResult result) {
    if (result.failure() instanceof DiagnosticException refused) {
      listener.tell(new SpawnFailed(refused.diagnostic())); // E-CAP-051: required, no sandbox
      return Behaviors.stopped();
    }
    if (result.failure() != null) {
      listener.tell(new SpawnFailed(HarnessSpawn.notStarted(launch, result.failure())));
      return Behaviors.stopped();
    }
    started = result.started();
    process = started.process();
    Containment containment = started.containment();
    if (containment.mode() != ContainmentConfig.Mode.OFF) {
      listener.tell(
          new ContainmentDecided(
              containment.mode().name().toLowerCase(java.util.Locale.ROOT),
              containment.contained(),
              containment.warning(),
              started.sandbox().map(RunSandbox::warnings).orElse(List.of())));
    }
    if (started.sandbox().isPresent()) {
      timers.startTimerWithFixedDelay(LIMITS_TIMER, CheckLimits.INSTANCE, LIMITS_CHECK);
    }
    signals.started(process);
    getContext()
        .getLog()
        .debug(
            "harness started pid={} args={} env={}",
            signals.pgid(),
            launch.args().size(),
            launch.env().keySet());
    stdin = new StdinPipe(process.getOutputStream(), io);
    listener.tell(new Spawned(process.pid(), signals.pgid(), started.sandbox()));
    pumps =
        HarnessPumps.start(
            process,
            limits,
            Materializer.matFromSystem(getContext().getSystem()),
            this::offerBatch,
            this::offerStderr);
    getContext().pipeToSelf(pumps.stdoutEnded(), (n, failure) -> new StdoutEof(n, failure));
    getContext().pipeToSelf(pumps.stdoutDone(), (done, failure) -> new StdoutDone(failure));
    getContext().pipeToSelf(pumps.stderrDone(), (done, failure) -> new StderrDone());
    getContext().pipeToSelf(process.onExit(), (p, failure) -> new ProcessExited(p.exitValue()));
    track(stdin.writeInitial(launch.stdin(), launch.keepStdinOpen()), true, false);
    if (signals.killRequested()) {
      startKill();
    }
    return this;
  }

  // --- stdout ---

  /** Called on a stream thread: hands a batch to the actor, completes when it is acknowledged. */
  private CompletableFuture<Done> offerBatch(List<LineFramer.Line> lines) {
    CompletableFuture<Done> ack = new CompletableFuture<>();
    self.tell(new StdoutBatch(lines, ack));
    return ack;
  }

  private Behavior<Command> onStdoutBatch(StdoutBatch batch) {
    output.onStdoutBatch(batch.lines(), batch.ack());
    return this;
  }

  /**
   * The listener hears {@link StdoutEnded} once the batches before the EOF have come, without
   * waiting for its own acknowledgements of them (a failed read is told by {@link StdoutDone}).
   */
  private Behavior<Command> onStdoutEof(StdoutEof eof) {
    if (eof.failure() == null) {
      output.onStdoutEof(eof.batches());
    }
    return this;
  }

  private Behavior<Command> onStdoutDone(StdoutDone done) {
    if (done.failure() != null) {
      getContext().getLog().warn("reading the harness's stdout failed", done.failure());
    }
    output.onStdoutDone();
    stdoutDone = true;
    return maybeStop();
  }

  // --- stderr ---

  /** Called on a stream thread, as {@link #offerBatch}. */
  private CompletableFuture<Done> offerStderr(byte[] bytes) {
    CompletableFuture<Done> ack = new CompletableFuture<>();
    self.tell(new StderrChunk(bytes, ack));
    return ack;
  }

  private Behavior<Command> onStderrChunk(StderrChunk chunk) {
    output.onStderrChunk(chunk.bytes(), chunk.ack());
    return this;
  }

  private Behavior<Command> onStderrDone() {
    exit.onStderrDone();
    return maybeReportExit();
  }

  // --- exit ---

  private Behavior<Command> onCheckLimits() {
    checkLimits(null);
    return this;
  }

  /** Reads the run's limit counters off this thread; the answer comes as {@link LimitsChecked}. */
  private void checkLimits(ProcessExited then) {
    RunSandbox sandbox = started.sandbox().orElseThrow();
    getContext()
        .pipeToSelf(
            CompletableFuture.supplyAsync(sandbox::breach, io),
            (breach, failure) ->
                new LimitsChecked(breach == null ? Optional.empty() : breach, then));
  }

  private Behavior<Command> onLimitsChecked(LimitsChecked checked) {
    if (checked.breach().isPresent() && !limitTold) {
      limitTold = true;
      timers.cancel(LIMITS_TIMER);
      listener.tell(new LimitPassed(checked.breach().get()));
    }
    return checked.then() == null ? this : exited(checked.then());
  }

  private Behavior<Command> onProcessExited(ProcessExited exited) {
    if (started != null && started.sandbox().isPresent() && !limitTold) {
      // A memory limit kills the harness: say why before the exit is reported.
      timers.cancel(LIMITS_TIMER);
      checkLimits(exited);
      return this;
    }
    return exited(exited);
  }

  private Behavior<Command> exited(ProcessExited exited) {
    if (exit.onExited(exited.exitValue())) {
      timers.startSingleTimer(
          DRAIN_TIMER, StderrDrainElapsed.INSTANCE, limits.stderrDrainTimeout());
    }
    return maybeReportExit();
  }

  private Behavior<Command> onDrainElapsed() {
    exit.onDrainElapsed();
    return maybeReportExit();
  }

  private Behavior<Command> maybeReportExit() {
    switch (exit.next()) {
      case WAIT -> {
        return this;
      }
      case KILL_GROUP -> {
        // The leader is gone; whatever it left in its group (a backgrounded child) must be dead
        // before the listener hears the exit, since the run reports right after
        // (docs/run-semantics.md
        // §9: no process of the group outlives the run). PostStop's kill comes too late for that.
        // Usually nothing is left: one kill(2) here says so, without the kill's round trip.
        if (signals.goneAfterExit()) {
          exit.groupFoundGone();
          return maybeReportExit();
        }
        startKill();
        return this;
      }
      default -> {
        timers.cancel(DRAIN_TIMER);
        ExitCode how = signals.decode(exit.report());
        listener.tell(
            new Exited(how.code(), how.signal(), output.stderrTail(), signals.killedByRuntime()));
        return maybeStop();
      }
    }
  }

  private Behavior<Command> maybeStop() {
    // Not before the pump finished: the listener still acknowledges the batches it handles.
    return exit.reported() && stdoutDone ? Behaviors.stopped() : this;
  }

  // --- stdin ---

  /** Counts a stdin write until it settles (an exit is reported after pending writes). */
  private void track(CompletableFuture<Void> write, boolean initial, boolean interrupt) {
    exit.stdinWriteStarted();
    getContext().pipeToSelf(write, (v, failure) -> new StdinWritten(initial, interrupt, failure));
  }

  private Behavior<Command> onStdinWritten(StdinWritten written) {
    exit.stdinWriteSettled();
    if (written.failure() == null) {
      if (written.interrupt()) {
        reply(true);
      }
      return maybeReportExit();
    }
    stdin.broken();
    if (written.interrupt()) {
      reply(false);
      return maybeReportExit();
    }
    if (written.initial() && !signals.killRequested()) {
      listener.tell(
          new StdinFailed(StdinPipe.notWritten(unwrap(written.failure()), launch.stdin().length)));
    }
    return maybeReportExit();
  }

  private Behavior<Command> onCloseStdin() {
    if (stdin != null) {
      stdin.closeIfOpen().ifPresent(w -> track(w, false, false));
    }
    return this;
  }

  // --- interrupt ---

  private Behavior<Command> onInterrupt(Interrupt interrupt) {
    if (process == null || exit.exited() || signals.killRequested()) {
      return reply(false);
    }
    switch (interrupt.method()) {
      case STDIN_MESSAGE -> {
        Optional<CompletableFuture<Void>> write =
            stdin.writeIfOpen(interrupt.stdinBytes().or(launch::interruptStdin));
        write.ifPresent(w -> track(w, false, true));
        return write.isPresent() ? this : reply(false);
      }
      case SIGNAL_INT -> {
        exit.signalStarted();
        getContext()
            .pipeToSelf(
                signals.interrupt(),
                (delivered, failure) -> new SignalSent(failure == null && delivered));
        return this;
      }
      default -> {
        return reply(false);
      }
    }
  }

  private Behavior<Command> onSignalSent(SignalSent sent) {
    exit.signalSettled();
    reply(sent.delivered());
    return maybeReportExit();
  }

  private Behavior<Command> reply(boolean delivered) {
    listener.tell(new InterruptResult(delivered));
    return this;
  }

  // --- egress ---

  private Behavior<Command> onRefused(Refused r) {
    RuntimeMetrics.get(getContext().getSystem()).egressRefused(); // every one, told or not
    if (r.refusedSoFar() <= REFUSALS_TOLD || r.refusedSoFar() % 100 == 0) {
      listener.tell(new EgressRefused(r.host(), r.port(), r.reason(), r.refusedSoFar()));
    }
    return this;
  }

  // --- kill ---

  private Behavior<Command> onKill(Kill kill) {
    if (!signals.requestKill()) {
      return this;
    }
    getContext().getLog().debug("killing harness group {}: {}", signals.pgid(), kill.cause());
    if (process != null) {
      startKill();
    }
    return this;
  }

  private void startKill() {
    CompletableFuture<Void> kill = signals.killAll(exit.exited());
    exit.killStarted();
    getContext().pipeToSelf(kill, (v, failure) -> new KillDone());
  }

  private Behavior<Command> onKillDone() {
    exit.killDone();
    return maybeReportExit();
  }

  // --- release ---

  /**
   * PostStop and PreRestart: stop the pumps, kill the group and close the pipes off this thread
   * (see {@link HarnessSpawn#release}; {@link HarnessPumps} says why the pumps do not stop with
   * this actor by themselves).
   */
  private Behavior<Command> releaseAll() {
    if (pumps != null) {
      pumps.shutdown();
    }
    HarnessSpawn.release(started, spawning, io);
    return this;
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }
}
