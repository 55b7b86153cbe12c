package io.capsule.hub.runner;

import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.schema.Schemas;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.ws.Disconnect;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The hub side of runner protocol v1 on Pekko HTTP: the route {@code /v1/runner}, a registry of
 * runners per project, task assignment and cancel, and the hub's events as a stream.
 *
 * <p>Connection rules: the bearer token is checked before the upgrade (HTTP 401 with {@code
 * E-PRO-007}); {@code hello.project_id} must match the token's (else close 4401, {@code
 * E-PRO-008}); no hello within the hello timeout closes 1008 ({@code E-PRO-009}); a newer
 * connection with the same {@link RunnerKey} closes the older with 4000; a frame over the cap
 * closes 1009; malformed, unknown or invalid frames are logged, published as {@link
 * HubEvent.Refused} and answered with an {@code error} frame when the runner declared {@code
 * error-frames}, never fatal. Progress is applied exactly once and in order per task; after a
 * resume the hub replays its own frames the runner lacks.
 *
 * <p>Threading: every method is thread-safe and returns at once; work happens on an internal actor.
 * {@link #events()} must be consumed: events wait (bounded) until a consumer attaches, and when the
 * buffer is full the hub stops reading from runners (back-pressure) rather than buffering without
 * bound.
 */
public final class HubServer {
  /**
   * The event batches held for slow consumers before the hub stops reading runners (a power of
   * two). A batch is what one journal write's effects published (at most the write's entries, or
   * one event outside a write), so this holds 256 writes' events at most.
   */
  private static final int EVENT_BUFFER = 256;

  private static final java.util.concurrent.atomic.AtomicLong INSTANCES =
      new java.util.concurrent.atomic.AtomicLong();

  private final ActorSystem<?> system;
  private final ActorRef<HubCore.Command> core;
  private final Source<HubEvent, NotUsed> events;
  private final ConcurrentMap<RunnerKey, RunnerInfo> runners = new ConcurrentHashMap<>();
  private final RunnerEdge edge;
  private final CompletableFuture<Done> brainStopped = new CompletableFuture<>();

  /**
   * The backstop on {@link #close()}'s wait for the brain: its last writes are bounded by the
   * journal's own write bound (20 s for a store), so this is only reached if something else hangs.
   */
  static final java.time.Duration CLOSE_BOUND = java.time.Duration.ofSeconds(60);

  private volatile ServerBinding binding;

  /** Starts the brain's actor: a system actor, or a child of a sharded entity. */
  @FunctionalInterface
  private interface Spawner {
    ActorRef<HubCore.Command> spawn(Behavior<HubCore.Command> behavior, String name);
  }

  private HubServer(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      HubJournal journal,
      Spawner spawner) {
    this.system = system;
    Schemas.preload();
    HubRestore restored = HubRestore.of(config, journal.restorable()); // throws: bad journal
    // A broadcast hub, not preMaterialize: a pre-materialized publisher is cancelled when no one
    // subscribes within the materializer's subscription timeout; the hub instead holds elements
    // (back-pressure) until a consumer attaches.
    // A journal failure fails the stream only after every event published before it: the events
    // of frames the journal kept must all reach consumers (HubRestartTest's random kills).
    // The effects of one journal write publish their events as one batch (EventBatches).
    Pair<EventBatches, Source<HubEvent, NotUsed>> q =
        EventBatches.broadcast(EVENT_BUFFER, Materializer.matFromSystem(system));
    this.events = q.second();
    this.core =
        spawner.spawn(
            HubCore.create(config, q.first(), runners, journal, restored, brainStopped),
            "capsule-hub-" + INSTANCES.incrementAndGet());
    ActorRef<HubCore.Command> brain = core;
    // Sockets accepted here talk to this hub's own brain; a cluster's nodes use a RunnerEdge of
    // their own that reaches the brain through sharding.
    this.edge = new RunnerEdge(system, config, tokens, brain::tell, config.helloTimeout());
  }

  private static Spawner systemActors(ActorSystem<?> system) {
    return (behavior, name) -> system.systemActorOf(behavior, name, Props.empty());
  }

  /** A hub that is not bound yet: embed {@link #route()} in your own server, or call bind. */
  public static HubServer create(
      ActorSystem<?> system, ProtocolConfig config, ProjectTokens tokens) {
    return new HubServer(system, config, tokens, HubJournal.none(), systemActors(system));
  }

  /**
   * A hub that starts from what {@code journal} recorded (the tasks its predecessor assigned, the
   * seqs it sent and applied) and records into it, so runners resume across a hub restart with
   * nothing lost and nothing applied twice. The caller owns the journal and closes it after {@link
   * #close()}. Events already applied before the restart are not published again: read them from
   * the journal.
   *
   * @throws io.capsule.protocol.ProtocolException {@code E-PRO-010} when the journal's entries do
   *     not replay (edited, or two hubs' histories mixed)
   */
  public static HubServer create(
      ActorSystem<?> system, ProtocolConfig config, ProjectTokens tokens, HubJournal journal) {
    return new HubServer(system, config, tokens, journal, systemActors(system));
  }

  /**
   * A hub whose brain is a child of {@code parent} (the project's sharded entity): stopping that
   * parent stops the brain, and the gateways that watch it close their sockets. Call from the
   * parent's own thread.
   */
  public static HubServer createIn(
      ActorContext<?> parent, ProtocolConfig config, ProjectTokens tokens, HubJournal journal) {
    return new HubServer(parent.getSystem(), config, tokens, journal, parent::spawn);
  }

  /**
   * Hands a socket accepted on any node (by a {@link RunnerGateway}) to this hub's brain; the
   * message is serializable, so it may come from another node through the brain's entity.
   */
  public void open(RunnerOpened opened) {
    core.tell(opened);
  }

  /** The brain's actor: its parent watches it (it stops on its own when its journal fails). */
  public ActorRef<?> brainActor() {
    return core;
  }

  /** Binds the route on {@code host:port} (port 0 picks a free one; see {@link #localAddress}). */
  public CompletionStage<HubServer> bind(String host, int port) {
    return Http.get(system)
        .newServerAt(host, port)
        .bind(route())
        .thenApply(
            b -> {
              binding = b;
              return this;
            });
  }

  public InetSocketAddress localAddress() {
    ServerBinding b = binding;
    if (b == null) {
      throw new IllegalStateException("not bound");
    }
    return b.localAddress();
  }

  /** {@code ws://host:port/v1/runner} of the binding. */
  public String url() {
    InetSocketAddress a = localAddress();
    return "ws://" + a.getHostString() + ":" + a.getPort() + "/v1/runner";
  }

  /** The route {@code /v1/runner}. */
  public Route route() {
    return edge.route();
  }

  /**
   * The hub's events, in order. Meant for one consumer (a second one sees only what happens after
   * it attaches); must be consumed (see the class comment).
   */
  public Source<HubEvent, NotUsed> events() {
    return events;
  }

  /** A snapshot of every runner the hub has seen. */
  public List<RunnerInfo> runners() {
    return List.copyOf(runners.values());
  }

  /** The runners of one project. */
  public List<RunnerInfo> runners(String projectId) {
    return runners.values().stream().filter(r -> r.key().projectId().equals(projectId)).toList();
  }

  /**
   * Assigns a task to a runner (now, or when it next connects). Completes with the frame as sent
   * (seq 1 for the task); fails with {@code E-PRO-006} when the runner's replay buffer is full.
   */
  public CompletionStage<TaskAssign> assign(
      RunnerKey runner, TaskSpec task, String role, Invocation invocation) {
    CompletableFuture<TaskAssign> reply = new CompletableFuture<>();
    core.tell(new HubCore.Assign(runner, new TaskAssign(task, role, invocation), reply));
    return reply;
  }

  /**
   * Cancels a task on the runner it was assigned to, now or at its next resume. Completes with the
   * cancel as sent, or empty when the task is unknown or already finished (a cancel after the
   * report changes nothing).
   */
  public CompletionStage<Optional<TaskCancel>> cancel(
      String projectId, String taskId, String reason) {
    CompletableFuture<Optional<TaskCancel>> reply = new CompletableFuture<>();
    core.tell(new HubCore.Cancel(projectId, taskId, reason, reply));
    return reply;
  }

  /** Ends a runner's current connection; true when it had one. The runner reconnects. */
  public CompletionStage<Boolean> disconnect(RunnerKey runner, Disconnect how) {
    CompletableFuture<Boolean> reply = new CompletableFuture<>();
    core.tell(new HubCore.Kick(runner, how, reply));
    return reply;
  }

  /**
   * Unbinds, then stops the hub's actor: it finishes the journal writes it started (their acks
   * still go out), then ends every runner connection. Completes once the actor has stopped, so a
   * caller that closes the journal's store next cannot drop a write the hub is waiting for (the
   * runner would sit on a connection to a hub that no longer reads it), and runners are already
   * dialing the next hub. Bounded by {@link #CLOSE_BOUND}.
   */
  public CompletionStage<Done> close() {
    ServerBinding b = binding;
    CompletionStage<Done> unbound =
        b == null
            ? CompletableFuture.completedFuture(Done.getInstance())
            : b.terminate(java.time.Duration.ofSeconds(3)).thenApply(t -> Done.getInstance());
    return unbound.thenCompose(
        d -> {
          core.tell(new HubCore.Shutdown());
          return brainStopped
              .copy()
              .completeOnTimeout(Done.getInstance(), CLOSE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
        });
  }
}
