package io.capsule.runtime.driver;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.metrics.RuntimeMetrics;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
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

/**
 * Owns one run's {@link ProcessDriver} instance (docs/run-semantics.md §2). Every call runs on the
 * blocking dispatcher, one at a time, in the order the calls arrived: a call that comes while
 * another runs waits here (the run sends the next {@link Parse} before the last one is answered, up
 * to {@code capsule.run.batches-in-flight}, so the next batch is ready when a parse returns; the
 * queue is as bounded as that). Each call's deadline is a timer message started when that call
 * starts on a blocking thread, so time spent waiting behind the call before it does not count. A
 * call that throws, overruns or returns nothing usable answers {@link Failed} ({@code E-RUN-034},
 * naming the function) and stops this actor; the calls waiting behind it are dropped unanswered
 * (the run counts what it sent). It is never restarted, because a fresh instance would not know
 * what {@code launch} was told.
 *
 * <p>The instance is closed on {@code PostStop} and {@code PreRestart}; when a call is still
 * running on the blocking thread, it is closed after that call returns (an instance is used by one
 * thread at a time).
 *
 * <p>Threading: the blocking thread only completes a future piped back as a message.
 */
public final class Driver extends AbstractBehavior<Driver.Command> {

  public sealed interface Command {}

  /** Plan the turn; answered with {@link Launched}. */
  public record Launch(LaunchRequest request, ActorRef<Reply> replyTo) implements Command {}

  /** Parse a batch of lines; answered with {@link Parsed}. */
  public record Parse(List<String> lines, ActorRef<Reply> replyTo) implements Command {
    public Parse {
      lines = List.copyOf(lines);
    }
  }

  /** Classify an exit with no terminal event; answered with {@link Classified}. */
  public record ClassifyExit(ExitStatus exit, ActorRef<Reply> replyTo) implements Command {}

  /** A call returned (its reply, made on the blocking thread) or threw. */
  private record CallDone(long callId, Reply reply, Throwable failure) implements Command {}

  private record Deadline(long callId) implements Command {}

  /** The call left the blocking dispatcher's queue and runs now: its deadline starts. */
  private record CallStarted(long callId) implements Command {}

  /** A call that arrived while another ran: started, in order, when the ones before it are done. */
  private record Waiting(
      String name, ActorRef<Reply> replyTo, Function<ProcessDriver, Reply> body) {}

  /** What the run receives. */
  public sealed interface Reply {}

  public record Launched(LaunchResult result) implements Reply {
    public Launched {
      Objects.requireNonNull(result, "launch returned no result");
    }
  }

  public record Parsed(List<Event> events) implements Reply {
    public Parsed {
      events = List.copyOf(Objects.requireNonNull(events, "parse returned no list")); // no nulls
    }
  }

  public record Classified(Event event) implements Reply {
    public Classified {
      Objects.requireNonNull(event, "classify-exit returned no event");
    }
  }

  /** A driver failure: the actor stops after sending this. */
  public record Failed(Diagnostic diagnostic) implements Reply {}

  private final Supplier<ProcessDriver> factory;
  private final Duration deadline;
  private final TimerScheduler<Command> timers;
  private final Executor blocking;

  // Set and used only on the blocking thread, one call at a time; the reference is atomic so the
  // close after the last call sees it.
  private final AtomicReference<ProcessDriver> instance = new AtomicReference<>();
  private CompletableFuture<?> inFlight = CompletableFuture.completedFuture(null);
  private long callId;
  private String callName = "";
  private ActorRef<Reply> callReplyTo;
  private boolean busy;
  private final Deque<Waiting> waiting = new ArrayDeque<>();

  /**
   * @param factory makes the instance (on the blocking dispatcher, at the first call): a WASM
   *     instantiation or a Java driver
   * @param deadline the call deadline (30 s by default)
   * @param dispatcher config path of the blocking dispatcher
   */
  public static Behavior<Command> create(
      Supplier<ProcessDriver> factory, Duration deadline, String dispatcher) {
    return Behaviors.setup(
        ctx -> Behaviors.withTimers(t -> new Driver(ctx, t, factory, deadline, dispatcher)));
  }

  private Driver(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      Supplier<ProcessDriver> factory,
      Duration deadline,
      String dispatcher) {
    super(ctx);
    this.factory = Objects.requireNonNull(factory, "factory");
    this.deadline = deadline;
    this.timers = timers;
    this.blocking = ctx.getSystem().dispatchers().lookup(DispatcherSelector.fromConfig(dispatcher));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(
            Launch.class,
            m -> call("launch", m.replyTo(), d -> new Launched(d.launch(m.request()))))
        .onMessage(
            Parse.class, m -> call("parse", m.replyTo(), d -> new Parsed(d.parse(m.lines()))))
        .onMessage(
            ClassifyExit.class,
            m -> call("classify-exit", m.replyTo(), d -> new Classified(d.classifyExit(m.exit()))))
        .onMessage(CallDone.class, this::onCallDone)
        .onMessage(Deadline.class, this::onDeadline)
        .onMessage(CallStarted.class, this::onCallStarted)
        .onSignal(PostStop.class, s -> release())
        .onSignal(PreRestart.class, s -> release())
        .build();
  }

  /**
   * Runs one call on the blocking dispatcher; {@code body} makes the typed reply there, so a result
   * that is not usable (null) fails the call like a trap does.
   *
   * @param name the WIT function, for the diagnostics
   */
  private Behavior<Command> call(
      String name, ActorRef<Reply> replyTo, Function<ProcessDriver, Reply> body) {
    if (busy) {
      waiting.addLast(new Waiting(name, replyTo, body));
      return this;
    }
    start(name, replyTo, body);
    return this;
  }

  private void start(String name, ActorRef<Reply> replyTo, Function<ProcessDriver, Reply> body) {
    busy = true;
    long id = ++callId;
    callName = name;
    callReplyTo = replyTo;
    // The deadline bounds the driver, not the queue in front of it: it starts when a blocking
    // thread picks the call up (under a burst of runs, calls may wait behind probes and file work).
    ActorRef<Command> self = getContext().getSelf();
    RuntimeMetrics metrics = RuntimeMetrics.get(getContext().getSystem());
    CompletableFuture<Reply> future =
        CompletableFuture.supplyAsync(
            () -> {
              self.tell(new CallStarted(id));
              ProcessDriver d = instance.get();
              if (d == null) {
                d = factory.get();
                instance.set(d);
              }
              long t0 = System.nanoTime();
              try {
                return body.apply(d);
              } finally {
                metrics.driverCall(name, d, System.nanoTime() - t0); // returned or threw
              }
            },
            blocking);
    inFlight = future;
    getContext().pipeToSelf(future, (result, failure) -> new CallDone(id, result, unwrap(failure)));
  }

  private Behavior<Command> onCallDone(CallDone done) {
    if (done.callId() != callId || !busy) {
      return this;
    }
    busy = false;
    timers.cancel(new Deadline(done.callId()));
    if (done.failure() != null) {
      return fail(describe(done.failure()));
    }
    callReplyTo.tell(done.reply());
    Waiting next = waiting.pollFirst();
    if (next != null) {
      start(next.name(), next.replyTo(), next.body());
    }
    return this;
  }

  private Behavior<Command> onCallStarted(CallStarted started) {
    if (started.callId() == callId && busy) {
      timers.startSingleTimer(new Deadline(started.callId()), deadline);
    }
    return this;
  }

  private Behavior<Command> onDeadline(Deadline d) {
    if (d.callId() != callId || !busy) {
      return this;
    }
    return fail("overran its deadline of " + deadline.toMillis() + " ms");
  }

  private Behavior<Command> fail(String what) {
    callReplyTo.tell(
        new Failed(
            Diagnostic.of(Code.E_RUN_034, "driver failed in " + callName + ": " + what)
                .with("function", callName)));
    return Behaviors.stopped();
  }

  private static String describe(Throwable t) {
    if (t instanceof DiagnosticException de) {
      return de.diagnostic().message();
    }
    return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  private Behavior<Command> release() {
    // Close after the call in flight (if any) returns: never concurrently with it, and never on
    // this actor's thread (closing a WASM instance frees native memory).
    inFlight.whenCompleteAsync(
        (r, e) -> {
          ProcessDriver d = instance.getAndSet(null);
          if (d != null) {
            try {
              d.close();
            } catch (RuntimeException ignored) {
              // Closing is best effort: the run is over and the instance unreachable.
            }
          }
        },
        blocking);
    return this;
  }
}
