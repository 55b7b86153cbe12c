package io.capsule.runtime.javadsl;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.VersionProber;
import io.capsule.runtime.driver.DriverLoading;
import io.capsule.runtime.driver.DriverRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The embedding API: a capsule runtime inside any {@code ActorSystem} or actor. Start runs from a
 * capsule folder or an in-memory manifest with a Java driver, and hear each run's events as typed
 * messages to an {@code ActorRef<RunEvent>} or as a {@code Source<RunEvent, RunHandle>}. Embedded
 * runs need no hub. Thread-safe.
 *
 * <pre>{@code
 * EmbeddedRuntime rt = EmbeddedRuntime.create(system, RunLimits.defaults(workRoot), loader);
 * RunHandle h = rt.start(RunRequest.of("t1", new CapsuleRef.Folder("/caps/hello"), "Say hi"),
 *     listener);
 * h.outcome().thenAccept(o -> ...);
 * }</pre>
 */
public final class EmbeddedRuntime {

  /**
   * Events a {@link #source} holds for a slow consumer. The run does not wait for its consumer, so
   * a consumer this far behind fails the stream loudly, with Pekko's {@link
   * org.apache.pekko.stream.BufferOverflowException} ("Buffer overflow (max capacity was:
   * 16384)!"), instead of losing events silently. The run goes on to its end regardless and cleans
   * up as always; only the stream is gone.
   */
  public static final int SOURCE_BUFFER = 16_384;

  private final ActorSystem<?> system;
  private final ActorRef<CapsuleRuntime.Command> guardian;

  private EmbeddedRuntime(ActorSystem<?> system, ActorRef<CapsuleRuntime.Command> guardian) {
    this.system = system;
    this.guardian = guardian;
  }

  /** A runtime as a system actor of {@code system}. */
  public static EmbeddedRuntime create(
      ActorSystem<?> system, RunLimits limits, DriverLoading loading) {
    return create(system, limits, loading, Optional.empty());
  }

  public static EmbeddedRuntime create(
      ActorSystem<?> system,
      RunLimits limits,
      DriverLoading loading,
      Optional<VersionProber> prober) {
    ActorRef<CapsuleRuntime.Command> g =
        system.systemActorOf(
            CapsuleRuntime.create(limits, loading, prober),
            "capsule-runtime-" + UUID.randomUUID(),
            Props.empty());
    return new EmbeddedRuntime(system, g);
  }

  /**
   * A runtime as a child of the actor whose context this is. Call it on that actor's thread (in its
   * setup or a message handler), like any {@code spawn}.
   */
  public static EmbeddedRuntime create(
      ActorContext<?> context, RunLimits limits, DriverLoading loading) {
    ActorRef<CapsuleRuntime.Command> g =
        context.spawn(
            CapsuleRuntime.create(limits, loading, Optional.empty()),
            "capsule-runtime-" + UUID.randomUUID());
    return new EmbeddedRuntime(context.getSystem(), g);
  }

  /** The guardian, for callers that speak its protocol directly (a runner's hub link). */
  public ActorRef<CapsuleRuntime.Command> guardian() {
    return guardian;
  }

  /** A loader for folder capsules that refuses every artifact (until a WASM loader is wired). */
  public static DriverLoading noFolderDrivers() {
    return m -> {
      throw new io.capsule.config.diag.DiagnosticException(
          io.capsule.config.diag.Diagnostic.of(
              io.capsule.config.diag.Code.E_RUN_006,
              "no driver loader is configured for artifact '"
                  + m.inference().driver().artifact()
                  + "'"));
    };
  }

  /**
   * Registers an in-memory capsule under {@code name}; runs then use {@code new
   * CapsuleRef.Registered(name)}. {@code drivers} makes one instance per run (and one to describe).
   */
  public CompletionStage<CapsuleRef.Registered> register(
      String name, Manifest manifest, Supplier<ProcessDriver> drivers) {
    return AskPattern.<CapsuleRuntime.Command, DriverRegistry.Registered>ask(
            guardian,
            reply ->
                new CapsuleRuntime.Register(
                    new DriverRegistry.Register(name, manifest, drivers, reply)),
            Duration.ofSeconds(10),
            system.scheduler())
        .thenApply(DriverRegistry.Registered::ref);
  }

  /** Starts a run; every event goes to {@code listener}, {@link RunEvent.Finished} last. */
  public RunHandle start(RunRequest request, ActorRef<RunEvent> listener) {
    return startWith(request, Optional.of(listener));
  }

  /** Starts a run whose events nobody hears; wait on {@link RunHandle#outcome()}. */
  public RunHandle start(RunRequest request) {
    return startWith(request, Optional.empty());
  }

  /**
   * A run as a stream: materializing it starts the run; the stream emits every event and completes
   * after {@link RunEvent.Finished}. Cancelling the stream does not cancel the run: use the handle.
   * A consumer {@link #SOURCE_BUFFER} events behind fails the stream (see there).
   */
  public Source<RunEvent, RunHandle> source(RunRequest request) {
    return chunkedSource(chunks -> startChunked(request, chunks));
  }

  /**
   * A run's events as a stream, fed by a relay made with {@link RunRelay#chunked} on the given ref
   * by {@code start}. The events come in chunks: a message into the stream per chunk, not per
   * event. {@link EventChunks} never back-pressures (it fails when it holds more than {@link
   * #SOURCE_BUFFER} events), so chunks do not wait in the actorRef source: the stream fails when
   * its consumer is {@link #SOURCE_BUFFER} events behind.
   */
  static Source<RunEvent, RunHandle> chunkedSource(
      Function<ActorRef<List<RunEvent>>, RunHandle> start) {
    return Source.<List<RunEvent>>actorRef(
            m -> Optional.empty(),
            m -> Optional.empty(),
            SOURCE_BUFFER / RunRelay.CHUNK_MAX,
            OverflowStrategy.fail())
        .mapMaterializedValue(ref -> start.apply(Adapter.<List<RunEvent>>toTyped(ref)))
        .via(new EventChunks(SOURCE_BUFFER));
  }

  private RunHandle startChunked(RunRequest request, ActorRef<List<RunEvent>> chunks) {
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    ActorRef<Object> relay =
        system.systemActorOf(
            RunRelay.chunked(chunks, outcome), "run-relay-" + UUID.randomUUID(), Props.empty());
    return started(request, relay, outcome);
  }

  private RunHandle startWith(RunRequest request, Optional<ActorRef<RunEvent>> listener) {
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    ActorRef<Object> relay =
        system.systemActorOf(
            RunRelay.create(listener, outcome), "run-relay-" + UUID.randomUUID(), Props.empty());
    return started(request, relay, outcome);
  }

  /** The relay takes a parsed batch's events as one message (it is local: lists need no wire). */
  private RunHandle started(
      RunRequest request, ActorRef<Object> relay, CompletableFuture<RunOutcome> outcome) {
    guardian.tell(
        new CapsuleRuntime.StartRun(
            request,
            Optional.of(RunRelay.events(relay)),
            Optional.of(RunRelay.batches(relay)),
            Optional.empty(),
            Optional.empty()));
    return new RunHandle(request.taskId(), guardian, outcome);
  }
}
