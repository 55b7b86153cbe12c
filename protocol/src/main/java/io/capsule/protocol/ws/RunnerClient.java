package io.capsule.protocol.ws;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.schema.Schemas;
import io.capsule.protocol.tls.ClientTls;
import io.capsule.protocol.token.TokenSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.BroadcastHub;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;

/**
 * The runner side of runner protocol v1: dials out to the hub, says {@code hello} with its resume
 * map, heartbeats, reconnects with exponential back-off and jitter, and replays what the hub has
 * not acknowledged. Frames the runner sends are numbered here ({@link #send}); frames from the hub
 * arrive, deduplicated and in order, on {@link #inbound()}.
 *
 * <p>Threading contract (for an actor such as {@code HubLink} wrapping this): every method is
 * thread-safe and returns at once; the work happens on an internal actor. The state listener is
 * called on that actor's thread, one call at a time, and must not block (send yourself a message).
 * {@link #inbound()} holds frames (back-pressuring the socket) until a consumer attaches; a
 * consumer that stops pulling back-pressures the socket too, never a growing buffer.
 *
 * <p>Memory is bounded: frames awaiting the hub live in the sequencing replay buffer ({@link
 * ProtocolConfig#replayBufferBound()}); when it is full, {@link #send} fails with {@code E-PRO-006}
 * instead of growing.
 */
public final class RunnerClient {
  private static final int INBOUND_BUFFER = 64;

  /**
   * What the client needs.
   *
   * @param hubUrl {@code ws://host:port/v1/runner} (or {@code wss://}), or several such URLs
   *     separated by commas: the nodes of one hub cluster, dialled round-robin on disconnect
   *     ({@link HubEndpoints})
   * @param capabilities declared in hello; keep {@code ack} so the buffer is trimmed and only the
   *     missing tail is replayed
   * @param onState called with each new {@link ConnectionState} (see the threading contract)
   * @param tls what a {@code wss://} hub's certificate must verify against: the system's CAs, plus
   *     a {@code --ca-file}'s ({@link ClientTls}); unused for {@code ws://}
   */
  public record Settings(
      String hubUrl,
      String projectId,
      String runnerVersion,
      List<String> capabilities,
      TokenSource tokens,
      ProtocolConfig config,
      Consumer<ConnectionState> onState,
      ClientTls tls) {
    public Settings {
      Objects.requireNonNull(hubUrl, "hubUrl");
      HubEndpoints.parse(hubUrl); // a bad URL fails here, not at the first dial
      Objects.requireNonNull(projectId, "projectId");
      Objects.requireNonNull(runnerVersion, "runnerVersion");
      capabilities = List.copyOf(capabilities);
      Objects.requireNonNull(tokens, "tokens");
      Objects.requireNonNull(config, "config");
      onState = onState == null ? s -> {} : onState;
      Objects.requireNonNull(tls, "tls");
    }

    /** Trusting the system's CAs for a {@code wss://} hub. */
    public Settings(
        String hubUrl,
        String projectId,
        String runnerVersion,
        List<String> capabilities,
        TokenSource tokens,
        ProtocolConfig config,
        Consumer<ConnectionState> onState) {
      this(
          hubUrl,
          projectId,
          runnerVersion,
          capabilities,
          tokens,
          config,
          onState,
          ClientTls.system());
    }

    /** Defaults: capabilities {@code ack} and {@code error-frames}, no state listener. */
    public static Settings of(
        String hubUrl,
        String projectId,
        String runnerVersion,
        TokenSource tokens,
        ProtocolConfig config) {
      return new Settings(
          hubUrl,
          projectId,
          runnerVersion,
          List.of(Capabilities.ACK, Capabilities.ERROR_FRAMES),
          tokens,
          config,
          null);
    }

    public Settings withOnState(Consumer<ConnectionState> listener) {
      return new Settings(
          hubUrl, projectId, runnerVersion, capabilities, tokens, config, listener, tls);
    }

    /** The same, trusting {@code trust} for a {@code wss://} hub. */
    public Settings withTls(ClientTls trust) {
      return new Settings(
          hubUrl, projectId, runnerVersion, capabilities, tokens, config, onState, trust);
    }
  }

  private static final java.util.concurrent.atomic.AtomicLong INSTANCES =
      new java.util.concurrent.atomic.AtomicLong();

  private final ActorSystem<?> system;
  private final Settings settings;
  private final ActorRef<RunnerCore.Command> core;
  private final Source<SequencedFrame, NotUsed> inbound;
  private final RunnerCore.StateCell state = new RunnerCore.StateCell();
  private final RunnerTraffic traffic = new RunnerTraffic();

  private RunnerClient(ActorSystem<?> system, Settings settings) {
    this.system = system;
    this.settings = settings;
    Schemas.preload();
    // A broadcast hub, not preMaterialize: a pre-materialized publisher is cancelled when no one
    // subscribes within the materializer's subscription timeout; the hub instead holds elements
    // (back-pressure) until a consumer attaches.
    Pair<SourceQueueWithComplete<SequencedFrame>, Source<SequencedFrame, NotUsed>> q =
        Source.<SequencedFrame>queue(INBOUND_BUFFER, OverflowStrategy.backpressure())
            .toMat(BroadcastHub.of(SequencedFrame.class, 256), Keep.both())
            .run(Materializer.matFromSystem(system));
    this.inbound = q.second();
    this.core =
        system.systemActorOf(
            RunnerCore.create(settings, new OrderedQueue<>(q.first()), state, traffic),
            "capsule-runner-client-" + INSTANCES.incrementAndGet(),
            Props.empty());
  }

  /** Starts the client; it dials at once and keeps reconnecting until {@link #close()}. */
  public static RunnerClient start(ActorSystem<?> system, Settings settings) {
    return new RunnerClient(system, settings);
  }

  /**
   * Numbers the frame with its task's next seq and sends it. Completes with the numbered frame once
   * it is in the socket's write queue, or at once while disconnected (it is replayed after
   * reconnecting). Waiting for each stage before the next send is how a producer gets the socket's
   * back-pressure. Fails with {@code E-PRO-006} when the replay buffer is full (the frame is not
   * sent and takes no seq).
   */
  public CompletionStage<SequencedFrame> send(SequencedFrame frame) {
    CompletableFuture<SequencedFrame> reply = new CompletableFuture<>();
    core.tell(new RunnerCore.Send(frame, reply));
    return reply;
  }

  /**
   * The same as {@link #send} as a stream stage: each frame is sent after the previous one was
   * accepted, so the socket back-pressures the upstream. Completes when the upstream does; fails on
   * {@code E-PRO-006}.
   */
  public Sink<SequencedFrame, CompletionStage<Done>> outbound() {
    return Flow.<SequencedFrame>create().mapAsync(1, this::send).toMat(Sink.ignore(), Keep.right());
  }

  /**
   * Frames from the hub ({@code task.assign}, {@code task.cancel}), each exactly once and in seq
   * order per task, across reconnects. Meant for one consumer (a second one would see only what
   * arrives after it attaches).
   */
  public Source<SequencedFrame, NotUsed> inbound() {
    return inbound;
  }

  /** The largest frame the hub accepts: {@link #send} refuses bigger ones ({@code E-PRO-005}). */
  public int frameCapBytes() {
    return settings.config().frameCapBytes();
  }

  /** What this client has sent, replayed and reconnected so far (for meters). */
  public RunnerTraffic traffic() {
    return traffic;
  }

  /** The latest connection state. */
  public ConnectionState connectionState() {
    return state.get();
  }

  /** Closes the connection (close frame 1000) and stops; {@link #inbound()} completes. */
  public CompletionStage<Done> close() {
    CompletableFuture<Done> reply = new CompletableFuture<>();
    core.tell(new RunnerCore.Stop(reply));
    return reply;
  }

  ActorSystem<?> system() {
    return system;
  }
}
