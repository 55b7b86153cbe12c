package io.capsule.hub;

import static org.apache.pekko.http.javadsl.server.Directives.concat;

import com.typesafe.config.Config;
import io.capsule.hub.events.TaskEventStream;
import io.capsule.hub.http.GuardedBinding;
import io.capsule.hub.http.ServerTls;
import io.capsule.hub.queue.QueueEntity;
import io.capsule.hub.queue.QueueState;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RunnerEdge;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.ProjectTokens;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;

/**
 * {@code capsule hub}: the protocol's hub endpoint ({@code /v1/runner}) and the task API ({@link
 * HubApi}) on one listening address, for one project.
 *
 * <p>The project's state is one actor, its brain ({@link HubBrain}: the runners' sequencing, the
 * tasks, the queue). With a store ({@link PersistentHubJournal}) the brain is a Cluster Sharding
 * entity keyed by project, so it lives on exactly one node of the cluster (a single hub is a
 * cluster of one) and, when that node dies, starts on a survivor from what the journal holds, as a
 * restarted hub does. Without a store it is an actor on this node. Either way this node's {@link
 * HubEdge} and runner gateways talk to it only with serializable messages, so every node answers
 * the same.
 */
public final class ReferenceHub {
  /**
   * The longest project id a hub serves. A task's journal rows are keyed by {@code
   * Task|<length>:<project><task>} in the store's 255-character {@code persistence_id} column, and
   * a task id may have 200 characters: a longer project id would leave some of its tasks unstorable
   * (their first write fails, and a hub whose store fails stops).
   */
  public static final int MAX_PROJECT_ID =
      255 - "Task|".length() - "99:".length() - TaskRequest.MAX_NAME;

  /** As the hub's journal waits for its store: long enough for a busy database, still bounded. */
  private static final Duration STORE_TIMEOUT = io.capsule.hub.store.HubStore.WRITE_TIMEOUT;

  /**
   * How long a node's API waits for the brain: a brain that is up answers in milliseconds; one
   * being restored or moved is answered 503 with Retry-After instead of a hang.
   */
  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(10);

  private static final AtomicLong INSTANCES = new AtomicLong();

  private final GuardedBinding binding;
  private final AtomicReference<ProjectHub> local;
  private final CompletionStage<Done> events;
  private final Runnable stopBrain;
  private final boolean secure;

  private ReferenceHub(
      GuardedBinding binding,
      AtomicReference<ProjectHub> local,
      CompletionStage<Done> events,
      Runnable stopBrain,
      boolean secure) {
    this.binding = binding;
    this.local = local;
    this.events = events;
    this.stopBrain = stopBrain;
    this.secure = secure;
  }

  /** Binds on {@code host:port} (port 0: a free one) for {@code projectId}; remembers nothing. */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port) {
    return start(system, config, tokens, projectId, host, port, HubJournal.none());
  }

  /**
   * Binds on {@code host:port} for {@code projectId}, starting from what {@code journal} recorded
   * and recording into it. The caller closes the journal after {@link #stop()}. A single node waits
   * until the brain restored; a cluster's node does not (the brain may be elsewhere, the cluster
   * not formed yet).
   *
   * @throws io.capsule.protocol.ProtocolException {@code E-PRO-010} when the journal does not
   *     replay
   */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port,
      HubJournal journal) {
    return start(system, config, tokens, projectId, host, port, journal, Optional.empty());
  }

  /**
   * As {@link #start(ActorSystem, ProtocolConfig, ProjectTokens, String, String, int, HubJournal)},
   * with the hub's meters registered on {@code registry} (an embedder's own; never a global one):
   * the embedder exposes them as it likes, and this hub's {@code /metrics} answers 404. Empty: a
   * Prometheus registry of the hub's own, served at {@code /metrics}. The meters live where the
   * project's brain runs: on this node for a single hub.
   */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port,
      HubJournal journal,
      Optional<MeterRegistry> registry) {
    return start(
        system, config, tokens, projectId, host, port, journal, registry, Optional.empty());
  }

  /**
   * As {@link #start(ActorSystem, ProtocolConfig, ProjectTokens, String, String, int, HubJournal,
   * Optional)}, serving HTTPS and {@code wss://} with {@code tls} (docs/operations.md, "TLS on
   * every wire"); plain HTTP and {@code ws://} when empty.
   */
  public static CompletionStage<ReferenceHub> start(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      String projectId,
      String host,
      int port,
      HubJournal journal,
      Optional<MeterRegistry> registry,
      Optional<ServerTls> tls) {
    checkProjectId(projectId);
    TaskEventStream.Settings sse = sseSettings(system.settings().config());
    Optional<JdbcReadJournal> reads = reads(journal);
    AtomicReference<ProjectHub> local = new AtomicReference<>();
    CompletableFuture<ProjectHub> firstBuilt = new CompletableFuture<>();
    ProjectHub.Deps deps =
        new ProjectHub.Deps(
            config,
            tokens,
            HubNode.get(system).live(projectId),
            reads,
            STORE_TIMEOUT,
            system.settings().config(),
            (built, failure) -> {
              if (failure != null) {
                firstBuilt.completeExceptionally(failure);
              } else {
                local.set(built);
                firstBuilt.complete(built);
              }
            },
            registry);
    HubEdge.Brain brain;
    Runnable stopBrain;
    boolean alone;
    if (journal instanceof PersistentHubJournal p) {
      // The brain is sharded where the store's cluster is: the journal's system (the same as
      // the HTTP side's in capsule hub; tests may serve HTTP from a plain system beside it).
      ClusterSharding sharding =
          HubNode.get(p.system())
              .shardBrains(
                  projectId,
                  ctx -> {
                    // The queue's entity starts recovering now, beside the brain's read of the
                    // tasks, and is ready when the brain asks it for the queue right after
                    // (PersistentQueueStore): one recovery off a moved brain's way.
                    ClusterSharding.get(p.system())
                        .entityRefFor(QueueEntity.KEY, ctx.getEntityId())
                        .<QueueState>ask(QueueEntity.Get::new, deps.storeTimeout());
                    return HubBrain.create(
                        ctx.getEntityId(), deps, p::reopen, Optional.of(ctx.getShard()));
                  });
      // The queue's entities on every node, as the task entities are (PersistentHubJournal):
      // sharding can then place them, and move them, anywhere, whichever node runs the brain.
      sharding.init(Entity.of(QueueEntity.KEY, ctx -> QueueEntity.create(ctx.getEntityId())));
      EntityRef<HubBrain.Command> entity = sharding.entityRefFor(HubBrain.KEY, projectId);
      brain = HubEdge.Brain.of(entity);
      stopBrain = () -> entity.tell(new HubBrain.Stop());
      alone = p.system().settings().config().getStringList("pekko.cluster.seed-nodes").isEmpty();
    } else {
      ActorRef<HubBrain.Command> actor =
          system.systemActorOf(
              HubBrain.create(projectId, deps, () -> journal),
              "capsule-hub-brain-" + INSTANCES.incrementAndGet(),
              Props.empty());
      brain = HubEdge.Brain.of(actor, system.scheduler());
      stopBrain = () -> actor.tell(new HubBrain.Stop());
      alone = true;
    }
    // A runner's socket reaches the brain through its entity (or actor): serializable messages.
    RunnerEdge runners =
        RunnerEdge.toBrain(
            system,
            config,
            tokens,
            opened -> brain.tell(new HubBrain.Connect(opened)),
            config.helloTimeout().plus(ASK_TIMEOUT));
    HubEdge edge =
        new HubEdge(system, tokens, projectId, brain, ASK_TIMEOUT, deps.live(), reads, sse);
    CompletionStage<Done> events = firstBuilt.thenCompose(h -> h.events);
    if (alone) {
      // Starts the brain now (it restores) and waits for it, as a restarted hub did.
      brain.<HubBrain.Found>ask(r -> new HubBrain.Lookup("", 0, r), STORE_TIMEOUT.multipliedBy(2));
    }
    CompletionStage<?> ready = alone ? firstBuilt : CompletableFuture.completedFuture(null);
    // The guarded edge, not a plain binding: slow or idle connections must not lock runners out
    // (capsule.hub.http.*: a header deadline, per-address and total caps).
    return ready.thenCompose(
        r ->
            GuardedBinding.bind(
                    system,
                    host,
                    port,
                    concat(runners.route(), edge.route()),
                    GuardedBinding.Limits.fromConfig(system.settings().config()),
                    tls)
                .thenApply(b -> new ReferenceHub(b, local, events, stopBrain, tls.isPresent())));
  }

  /** The store's read side, when the hub keeps its tasks in one. */
  private static Optional<JdbcReadJournal> reads(HubJournal journal) {
    return journal instanceof PersistentHubJournal p
        ? Optional.of(
            PersistenceQuery.get(p.system())
                .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier()))
        : Optional.empty();
  }

  /**
   * {@code capsule.hub.sse}; a keepalive that is not well under the HTTP idle timeout would let the
   * server close a quiet watcher's stream, so it is refused at start.
   */
  static TaskEventStream.Settings sseSettings(Config config) {
    Duration keepAlive = config.getDuration("capsule.hub.sse.keepalive");
    Duration idle = config.getDuration("capsule.hub.http.idle-timeout");
    if (keepAlive.multipliedBy(2).compareTo(idle) > 0) {
      throw new IllegalArgumentException(
          "capsule.hub.sse.keepalive ("
              + keepAlive
              + ") must be at most half of capsule.hub.http.idle-timeout ("
              + idle
              + "), or quiet event streams are closed as idle");
    }
    return new TaskEventStream.Settings(keepAlive, config.getInt("capsule.hub.sse.buffer"));
  }

  /**
   * Completes when the hub stops; fails when it stopped on its own because it could not keep its
   * journal ({@code E-PRO-010}).
   */
  public CompletionStage<Done> terminated() {
    return events;
  }

  public InetSocketAddress address() {
    return binding.localAddress();
  }

  /** {@code http://host:port} of the API ({@code https://} over TLS). */
  public String apiUrl() {
    return (secure ? "https://" : "http://")
        + address().getHostString()
        + ":"
        + address().getPort();
  }

  /** {@code ws://host:port/v1/runner} for runners ({@code wss://} over TLS). */
  public String runnerUrl() {
    return (secure ? "wss://" : "ws://")
        + address().getHostString()
        + ":"
        + address().getPort()
        + "/v1/runner";
  }

  /**
   * The brain's runner side, when the brain runs on this node (always, for a single hub).
   *
   * @throws IllegalStateException when the brain runs on another node
   */
  public HubServer hub() {
    ProjectHub h = local.get();
    if (h == null) {
      throw new IllegalStateException("the project's brain does not run on this node");
    }
    return h.hub;
  }

  public CompletionStage<Done> stop() {
    return binding
        .terminate()
        .thenCompose(
            t -> {
              ProjectHub h = local.get();
              if (h == null) {
                return CompletableFuture.completedFuture(Done.getInstance());
              }
              stopBrain.run(); // closes its runners' sockets and stops it (or passivates it)
              return h.events.handle((d, e) -> Done.getInstance());
            });
  }

  /**
   * Refuses a project id this hub cannot serve: empty, over {@link #MAX_PROJECT_ID} characters, or
   * holding a control character (it reaches logs and the store's keys).
   *
   * @throws IllegalArgumentException saying which and what to do
   */
  public static void checkProjectId(String projectId) {
    if (projectId.isEmpty()) {
      throw new IllegalArgumentException("the project id is empty; give the hub a project id");
    }
    if (projectId.length() > MAX_PROJECT_ID) {
      throw new IllegalArgumentException(
          "the project id has "
              + projectId.length()
              + " characters; a hub's project id may have at most "
              + MAX_PROJECT_ID
              + " characters (with a 200-character task id it keys the task's rows in the"
              + " store's 255-character persistence_id column); choose a shorter one");
    }
    if (projectId.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(
          "the project id holds a control character; use printable characters only");
    }
  }
}
