package io.capsule.runtime.harness;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.InterruptMethod;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
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
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.UniqueKillSwitch;

/**
 * Owns one harness OS process group (run-semantics §4, §5, §9): spawns it from an {@link
 * AppliedLaunch}, feeds stdin, streams stdout as acknowledged line batches, keeps stderr's tail,
 * delivers interrupts and kills the whole group.
 *
 * <p>The harness is started through {@code setsid(1)}, so it leads a new session and process group
 * whose id is its pid; signals go to the group, which also reaches children that outlive their
 * parent. Nothing of the JVM's environment is inherited: the environment is exactly the applied
 * one.
 *
 * <p>Back-pressure: stdout is read by a Pekko stream (pipe reads on the blocking dispatcher named
 * by {@link HarnessLimits#ioDispatcher()}) that frames lines and batches whatever is ready (at most
 * {@code batchMaxLines}); one batch is in flight at a time and the next is sent only after the
 * listener's {@link BatchHandled}. Until then the stream stops reading, the pipe fills and the
 * harness blocks in its write: nothing is buffered without bound.
 *
 * <p>Timers: the listener (the run) owns every run timer (terminal grace, interrupt grace,
 * inactivity); this actor owns only the drain bound after the exit: {@link Exited} waits until
 * stderr has ended and pending stdin writes have settled, or until that bound.
 *
 * <p>Leader exit: when the harness (the group's leader) exits, the JDK takes what the stdout pipe
 * holds and closes it, unless a read is in progress at that moment. So output that orphaned
 * children write after the leader's exit may be lost, and {@link StdoutEnded} usually follows the
 * exit soon; the orphans are killed with the group when this actor stops.
 *
 * <p>Lifecycle: it stops itself once it has sent both {@link Exited} and {@link StdoutEnded} (or
 * after {@link SpawnFailed}). On {@code PostStop} and {@code PreRestart} it kills the whole group
 * and closes the pipes, so no process of the group outlives it. Spawn it with the default (stop)
 * supervision: a restart would spawn the harness again.
 *
 * <p>Threading: process waits, pipe I/O, spawns and signals run on the I/O dispatcher; those
 * threads only send messages to this actor (or complete futures the actor created).
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

  /** The listener handled the last {@link Lines}: the next batch may come. */
  public record BatchHandled() implements Command {}

  private record SpawnResult(Process process, Throwable failure) implements Command {}

  private record StdoutBatch(List<LineFramer.Line> lines, CompletableFuture<Done> ack)
      implements Command {}

  private record StdoutDone(Throwable failure) implements Command {}

  private record StderrChunk(byte[] bytes, CompletableFuture<Done> ack) implements Command {}

  private record StderrDone() implements Command {}

  private record ProcessExited(int exitValue) implements Command {}

  private record StdinWritten(boolean initial, boolean interrupt, Throwable failure)
      implements Command {}

  private record SignalSent(boolean delivered) implements Command {}

  private record KillDone() implements Command {}

  private enum StderrDrainElapsed implements Command {
    INSTANCE
  }

  /** What the listener receives. */
  public sealed interface Event {}

  /** The harness runs; its process group id equals its pid. */
  public record Spawned(long pid, long pgid) implements Event {}

  /** The harness could not be started ({@code E-RUN-007}); the actor stops. */
  public record SpawnFailed(Diagnostic diagnostic) implements Event {}

  /**
   * Writing the initial stdin failed (sent before {@link Exited} unless the drain bound ran out)
   * ({@code E-RUN-007}), e.g. the harness exited without reading it. Not sent for writes cut short
   * by {@link Kill}; the run decides what it means.
   */
  public record StdinFailed(Diagnostic diagnostic) implements Event {}

  /** The next lines of stdout, in order; answer with {@link BatchHandled}. */
  public record Lines(List<String> lines) implements Event {
    public Lines {
      lines = List.copyOf(lines);
    }
  }

  /** A line of the next {@link Lines} was longer than the cap and was cut (for the trace). */
  public record LineCut(String note) implements Event {}

  /** stdout reached EOF (or failed to read, which is logged); no more {@link Lines} follow. */
  public record StdoutEnded() implements Event {}

  /** Whether the last {@link Interrupt} reached the harness; sent before {@link Exited}. */
  public record InterruptResult(boolean delivered) implements Event {}

  /**
   * The harness (the group leader) exited. The JDK reports a death by signal N as 128+N, so a
   * status of 129..192 is reported as that signal and no code (see {@code ExitCode}).
   *
   * @param killedByRuntime a {@link Kill} (or the actor's stop) arrived while it was running
   */
  public record Exited(
      Optional<Integer> code, Optional<Integer> signal, String stderrTail, boolean killedByRuntime)
      implements Event {}

  private static final int STDOUT_CHUNK = 64 * 1024;
  private static final int STDERR_CHUNK = 4 * 1024;
  private static final Object DRAIN_TIMER = "stderr-drain";

  private final AppliedLaunch launch;
  private final ActorRef<Event> listener;
  private final ActorRef<Command> self;
  private final HarnessLimits limits;
  private final TimerScheduler<Command> timers;
  private final Executor io;
  private final Materializer materializer;
  private final StderrTail stderrTail;
  private final CompletableFuture<Process> spawning;

  private Process process;
  private UniqueKillSwitch stdoutSwitch;
  private UniqueKillSwitch stderrSwitch;
  private long pgid;
  private StdinPipe stdin;
  private boolean stdinOpen = true;
  private int stdinWrites;
  private int signalsInFlight;
  private CompletableFuture<Done> pendingAck;
  private boolean killRequested;
  private boolean killedByRuntime;
  private boolean killInFlight;

  /** The whole group has been killed once the leader was gone (or on request). */
  private boolean groupKilled;

  private Integer exitValue;
  private boolean stderrDone;
  private boolean drainElapsed;
  private boolean exitReported;
  private boolean stdoutEnded;

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
    this.materializer = Materializer.matFromSystem(context.getSystem());
    this.stderrTail = new StderrTail(limits.stderrTailBytes());
    this.spawning = CompletableFuture.supplyAsync(() -> start(launch), io);
    context.pipeToSelf(spawning, (p, failure) -> new SpawnResult(p, unwrap(failure)));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(SpawnResult.class, this::onSpawnResult)
        .onMessage(StdoutBatch.class, this::onStdoutBatch)
        .onMessage(BatchHandled.class, this::onBatchHandled)
        .onMessage(StdoutDone.class, this::onStdoutDone)
        .onMessage(StderrChunk.class, this::onStderrChunk)
        .onMessage(StderrDone.class, m -> onStderrDone())
        .onMessage(ProcessExited.class, this::onProcessExited)
        .onMessage(Interrupt.class, this::onInterrupt)
        .onMessage(SignalSent.class, this::onSignalSent)
        .onMessage(StdinWritten.class, this::onStdinWritten)
        .onMessage(CloseStdin.class, m -> onCloseStdin())
        .onMessage(Kill.class, this::onKill)
        .onMessage(KillDone.class, m -> onKillDone())
        .onMessageEquals(StderrDrainElapsed.INSTANCE, this::onDrainElapsed)
        .onSignal(PostStop.class, s -> releaseAll())
        .onSignal(PreRestart.class, s -> releaseAll())
        .build();
  }

  // --- spawn ---

  /** Runs on the I/O dispatcher. */
  private static Process start(AppliedLaunch launch) {
    try {
      return HarnessSpawn.start(launch.binary(), launch.args(), launch.env(), launch.workdir());
    } catch (IOException e) {
      throw new CompletionException(e);
    }
  }

  private Behavior<Command> onSpawnResult(SpawnResult result) {
    if (result.failure() != null) {
      listener.tell(
          new SpawnFailed(
              Diagnostic.of(
                  Code.E_RUN_007,
                  "could not start the harness: " + result.failure().getMessage(),
                  java.util.Map.of("binary", launch.binary().toString()))));
      return Behaviors.stopped();
    }
    process = result.process();
    pgid = process.pid();
    getContext()
        .getLog()
        .debug(
            "harness started pid={} args={} env={}",
            pgid,
            launch.args().size(),
            launch.env().keySet());
    stdin = new StdinPipe(process.getOutputStream(), io);
    listener.tell(new Spawned(process.pid(), pgid));
    Pair<UniqueKillSwitch, CompletionStage<Done>> out =
        HarnessStreams.stdout(process, limits, STDOUT_CHUNK, this::offerBatch).run(materializer);
    stdoutSwitch = out.first();
    getContext().pipeToSelf(out.second(), (done, failure) -> new StdoutDone(failure));
    Pair<UniqueKillSwitch, CompletionStage<Done>> err =
        HarnessStreams.stderr(process, limits, STDERR_CHUNK, this::offerStderr).run(materializer);
    stderrSwitch = err.first();
    getContext().pipeToSelf(err.second(), (done, failure) -> new StderrDone());
    getContext().pipeToSelf(process.onExit(), (p, failure) -> new ProcessExited(p.exitValue()));
    writeInitialStdin();
    if (killRequested) {
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
    pendingAck = batch.ack();
    List<String> texts = new ArrayList<>(batch.lines().size());
    for (LineFramer.Line line : batch.lines()) {
      if (line.isCut()) {
        listener.tell(
            new LineCut(
                "stdout line of "
                    + line.originalBytes()
                    + " bytes cut at the line cap of "
                    + limits.lineCapBytes()
                    + " bytes"));
      }
      texts.add(line.text());
    }
    listener.tell(new Lines(texts));
    return this;
  }

  private Behavior<Command> onBatchHandled(BatchHandled ack) {
    if (pendingAck != null) {
      CompletableFuture<Done> done = pendingAck;
      pendingAck = null;
      done.complete(Done.getInstance());
    }
    return this;
  }

  private Behavior<Command> onStdoutDone(StdoutDone done) {
    if (done.failure() != null) {
      getContext().getLog().warn("reading the harness's stdout failed", done.failure());
    }
    stdoutEnded = true;
    listener.tell(new StdoutEnded());
    return maybeStop();
  }

  // --- stderr ---

  private CompletableFuture<Done> offerStderr(byte[] bytes) {
    CompletableFuture<Done> ack = new CompletableFuture<>();
    self.tell(new StderrChunk(bytes, ack));
    return ack;
  }

  private Behavior<Command> onStderrChunk(StderrChunk chunk) {
    stderrTail.append(chunk.bytes());
    chunk.ack().complete(Done.getInstance());
    return this;
  }

  private Behavior<Command> onStderrDone() {
    stderrDone = true;
    return maybeReportExit();
  }

  // --- exit ---

  private Behavior<Command> onProcessExited(ProcessExited exited) {
    exitValue = exited.exitValue();
    if (!stderrDone || stdinWrites > 0 || signalsInFlight > 0) {
      Duration bound = limits.stderrDrainTimeout();
      timers.startSingleTimer(DRAIN_TIMER, StderrDrainElapsed.INSTANCE, bound);
    }
    return maybeReportExit();
  }

  private Behavior<Command> onDrainElapsed() {
    drainElapsed = true;
    return maybeReportExit();
  }

  private Behavior<Command> maybeReportExit() {
    // Interrupt answers come before the exit, so the listener never waits for one after it.
    boolean drained = stderrDone && stdinWrites == 0 && signalsInFlight == 0;
    if (exitReported || exitValue == null || killInFlight || !(drained || drainElapsed)) {
      return this;
    }
    if (!groupKilled) {
      // The leader is gone; whatever it left in its group (a backgrounded child) must be dead
      // before the listener hears the exit, since the run reports right after (run-semantics §9:
      // no process of the group outlives the run). PostStop's kill comes too late for that.
      startKill();
      return this;
    }
    exitReported = true;
    timers.cancel(DRAIN_TIMER);
    ExitCode how = ExitCode.decode(exitValue);
    listener.tell(new Exited(how.code(), how.signal(), stderrTail.render(), killedByRuntime));
    return maybeStop();
  }

  private Behavior<Command> maybeStop() {
    return exitReported && stdoutEnded ? Behaviors.stopped() : this;
  }

  // --- stdin ---

  private void writeInitialStdin() {
    byte[] bytes = launch.stdin();
    boolean close = !launch.keepStdinOpen();
    if (close) {
      stdinOpen = false;
    }
    enqueueStdin(bytes, close, true, false);
  }

  private void enqueueStdin(byte[] bytes, boolean close, boolean initial, boolean interrupt) {
    stdinWrites++;
    getContext()
        .pipeToSelf(
            stdin.write(bytes, close),
            (v, failure) -> new StdinWritten(initial, interrupt, failure));
  }

  private Behavior<Command> onStdinWritten(StdinWritten written) {
    stdinWrites--;
    if (written.failure() == null) {
      if (written.interrupt()) {
        reply(true);
      }
      return maybeReportExit();
    }
    stdinOpen = false;
    if (written.interrupt()) {
      reply(false);
      return maybeReportExit();
    }
    if (written.initial() && !killRequested) {
      listener.tell(
          new StdinFailed(
              Diagnostic.of(
                  Code.E_RUN_007,
                  "could not write the harness's stdin: " + unwrap(written.failure()).getMessage(),
                  java.util.Map.of("stdin_bytes", String.valueOf(launch.stdin().length)))));
    }
    return maybeReportExit();
  }

  private Behavior<Command> onCloseStdin() {
    if (process != null && stdinOpen) {
      stdinOpen = false;
      enqueueStdin(new byte[0], true, false, false);
    }
    return this;
  }

  // --- interrupt ---

  private Behavior<Command> onInterrupt(Interrupt interrupt) {
    if (process == null || exitValue != null || killRequested) {
      return reply(false);
    }
    switch (interrupt.method()) {
      case STDIN_MESSAGE -> {
        Optional<byte[]> bytes = interrupt.stdinBytes().or(launch::interruptStdin);
        if (!stdinOpen || bytes.isEmpty() || bytes.get().length == 0) {
          return reply(false);
        }
        enqueueStdin(bytes.get(), false, false, true);
        return this;
      }
      case SIGNAL_INT -> {
        long group = pgid;
        signalsInFlight++;
        getContext()
            .pipeToSelf(
                CompletableFuture.supplyAsync(() -> ProcessGroup.signal(group, "INT"), io),
                (delivered, failure) -> new SignalSent(failure == null && delivered));
        return this;
      }
      default -> {
        return reply(false);
      }
    }
  }

  private Behavior<Command> onSignalSent(SignalSent sent) {
    signalsInFlight--;
    reply(sent.delivered());
    return maybeReportExit();
  }

  private Behavior<Command> reply(boolean delivered) {
    listener.tell(new InterruptResult(delivered));
    return this;
  }

  // --- kill ---

  private Behavior<Command> onKill(Kill kill) {
    if (killRequested) {
      return this;
    }
    killRequested = true;
    getContext().getLog().debug("killing harness group {}: {}", pgid, kill.cause());
    if (process != null) {
      startKill();
    }
    return this;
  }

  private void startKill() {
    if (exitValue == null) {
      killedByRuntime = true;
    }
    killInFlight = true;
    Process leader = process;
    long group = pgid;
    getContext()
        .pipeToSelf(
            CompletableFuture.runAsync(() -> ProcessGroup.killAll(group, leader.toHandle()), io),
            (v, failure) -> new KillDone());
  }

  private Behavior<Command> onKillDone() {
    killInFlight = false;
    groupKilled = true;
    return maybeReportExit();
  }

  // --- release ---

  /**
   * PostStop and PreRestart: stop the streams, kill the group and close the pipes on the I/O
   * dispatcher (closing a pipe can wait for a blocked writer); inline only if that dispatcher is
   * already shut down. The streams run on the system's materializer, not on one bound to this
   * actor: a pipe read blocked until the group dies would otherwise hold up this actor's stop, and
   * with it the kill that ends the read.
   */
  private Behavior<Command> releaseAll() {
    if (stdoutSwitch != null) {
      stdoutSwitch.shutdown();
      stderrSwitch.shutdown();
    }
    if (process == null) {
      // A spawn still in flight is killed as soon as it completes.
      spawning.thenAcceptAsync(HarnessSpawn::killAndClose, io);
      return this;
    }
    Process leader = process;
    try {
      io.execute(() -> HarnessSpawn.killAndClose(leader));
    } catch (RejectedExecutionException e) {
      HarnessSpawn.killAndClose(leader);
    }
    return this;
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }
}
