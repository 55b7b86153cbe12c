package io.capsule.hub.runner;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.standing.NodeStanding;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException.TokenRefused;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenClaims;
import io.capsule.protocol.ws.OrderedQueue;
import io.capsule.protocol.ws.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.Authorization;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.http.scaladsl.settings.WebSocketSettings;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;

/**
 * The runner endpoint {@code /v1/runner} of one node: checks the bearer token before the upgrade
 * (HTTP 401 {@code E-PRO-007}, 403 {@code E-PRO-012} for a token that is not a runner's), then runs
 * the socket through a {@link RunnerGateway} that talks to the project's brain, wherever it is.
 * Frame decoding, the frame cap, heartbeats and the socket's back-pressure stay on this node.
 */
public final class RunnerEdge {
  /**
   * How long one batch of frames may wait for the brain to consume it. Generous: the brain waits
   * for its store (bounded there); past it the socket fails and the runner resumes on a new
   * connection.
   */
  private static final Duration CONSUME_TIMEOUT = Duration.ofSeconds(60);

  private static final AtomicLong IDS = new AtomicLong();

  private final ActorSystem<?> system;
  private final ProtocolConfig config;
  private final ProjectTokens tokens;
  private final RunnerGateway.Brain brain;
  private final Duration welcomeTimeout;
  private final WebSocketSettings wsSettings;
  private final LoggingAdapter log;
  private final String node = UUID.randomUUID().toString().substring(0, 8);
  private final NodeStanding standing;

  /**
   * @param welcomeTimeout how long a new socket waits for the brain to answer (a brain moving to
   *     another node takes the cluster's failover time)
   */
  RunnerEdge(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      RunnerGateway.Brain brain,
      Duration welcomeTimeout) {
    this.system = system;
    this.config = config;
    this.tokens = tokens;
    this.brain = brain;
    this.welcomeTimeout = welcomeTimeout;
    this.wsSettings =
        (WebSocketSettings) ServerSettings.create(Adapter.toClassic(system)).getWebsocketSettings();
    this.log = Logging.getLogger(Adapter.toClassic(system), RunnerEdge.class);
    this.standing = NodeStanding.get(system);
  }

  /**
   * The runner endpoint of a node whose sockets go to the brain through {@code open} (the brain's
   * sharded entity, or its actor on this node).
   *
   * @param welcomeTimeout how long a new socket waits for the brain to answer
   */
  public static RunnerEdge toBrain(
      ActorSystem<?> system,
      ProtocolConfig config,
      ProjectTokens tokens,
      java.util.function.Consumer<RunnerOpened> open,
      Duration welcomeTimeout) {
    return new RunnerEdge(system, config, tokens, open::accept, welcomeTimeout);
  }

  /** The route {@code /v1/runner}. */
  public Route route() {
    return pathPrefix("v1", () -> path("runner", () -> extractRequest(r -> complete(accept(r)))));
  }

  private HttpResponse accept(HttpRequest request) {
    var upgrade = request.getAttribute(AttributeKeys.webSocketUpgrade);
    if (upgrade.isEmpty()) {
      return HttpResponse.create()
          .withStatus(StatusCodes.BAD_REQUEST)
          .withEntity("expected a WebSocket upgrade");
    }
    TokenClaims claims;
    try {
      claims = tokens.verify(bearer(request).orElse(null));
    } catch (TokenRefused e) {
      log.warning("runner refused before upgrade: {}", e.diagnostic().render());
      return HttpResponse.create()
          .withStatus(StatusCodes.UNAUTHORIZED)
          .withEntity(e.diagnostic().toString());
    }
    if (!claims.scope().opensRunnerEndpoint()) {
      // An api or admin token is for people and scripts: it must not pose as a runner.
      Diagnostic d =
          Diagnostic.of(
              Code.E_PRO_012,
              "a '" + claims.scope().claim() + "' token cannot open the runner endpoint");
      log.warning("runner refused before upgrade: {}", d);
      return HttpResponse.create().withStatus(StatusCodes.FORBIDDEN).withEntity(d.toString());
    }
    if (standing.cutOff()) {
      // No socket the brain could not hear: the runner dials its next hub URL at once.
      Diagnostic d =
          Diagnostic.of(
              Code.E_HUB_009, "this hub node is cut off from its cluster; dial another node");
      return HttpResponse.create()
          .withStatus(StatusCodes.SERVICE_UNAVAILABLE)
          .withEntity(d.toString());
    }
    // Unique in the cluster: the brain keys connections of every node by it.
    String id = node + "-" + IDS.incrementAndGet();
    RunnerKey key =
        new RunnerKey(claims.projectId(), claims.runnerId().orElse(RunnerKey.DEFAULT_RUNNER));
    Materializer mat = Materializer.matFromSystem(system);
    Pair<SourceQueueWithComplete<Message>, Source<Message, NotUsed>> out =
        Source.<Message>queue(config.outboundQueue(), OverflowStrategy.backpressure())
            .preMaterialize(mat);
    CompletableFuture<ServerSocket.Control> control = new CompletableFuture<>();
    ActorRef<RunnerGateway.Command> gateway =
        system.systemActorOf(
            RunnerGateway.create(
                id,
                key,
                claims.projectId(),
                brain,
                welcomeTimeout,
                new OrderedQueue<>(out.first()),
                control),
            "runner-gateway-" + id,
            Props.empty());
    Runnable unwatch = standing.onCutOff(() -> gateway.tell(new RunnerGateway.CutOff()));
    Source<Message, NotUsed> outbound =
        out.second()
            .keepAlive(heartbeat(config), Wire::ping)
            .watchTermination(
                (m, done) -> {
                  done.whenComplete(
                      (d, e) -> {
                        unwatch.run();
                        gateway.tell(
                            new RunnerGateway.SocketEnded(
                                e == null ? "closed" : String.valueOf(e)));
                      });
                  return m;
                });
    Sink<Message, NotUsed> inbound =
        inbound(
            config,
            mat,
            ping -> gateway.tell(new RunnerGateway.Pinged(ping.nonce())),
            batch ->
                AskPattern.<RunnerGateway.Command, RunnerGateway.Consumed>ask(
                    gateway,
                    replyTo -> new RunnerGateway.FromRunner(batch, replyTo),
                    CONSUME_TIMEOUT,
                    system.scheduler()));
    return ServerSocket.accept(
        upgrade.get(), inbound, outbound, control, config.frameCapBytes(), wsSettings, log);
  }

  /**
   * A socket's runner messages, decoded, to its gateway: at most {@link RunnerGateway#IN_FLIGHT}
   * batches unanswered by {@code toGateway}'s stage, in order; what arrives meanwhile waits in the
   * next batch ({@link RunnerGateway#BATCH_WEIGHT}). Fails when no message comes within dead-after.
   */
  static Sink<Message, NotUsed> inbound(
      ProtocolConfig config,
      Materializer mat,
      Function<List<Object>, CompletionStage<RunnerGateway.Consumed>> toGateway) {
    return inbound(config, mat, null, toGateway);
  }

  /**
   * As {@link #inbound(ProtocolConfig, Materializer, Function)}, but each {@code ping} goes to
   * {@code onPing} as soon as it is read, ahead of the batches waiting for the brain, and not to
   * the brain ({@link RunnerGateway.Pinged}).
   */
  static Sink<Message, NotUsed> inbound(
      ProtocolConfig config,
      Materializer mat,
      java.util.function.Consumer<Ping> onPing,
      Function<List<Object>, CompletionStage<RunnerGateway.Consumed>> toGateway) {
    return Flow.<Message>create()
        .idleTimeout(config.deadAfter())
        .via(Wire.decodeKeepingText(config.frameCapBytes(), mat))
        .filter(
            f -> {
              if (onPing != null && f instanceof Wire.Read r) {
                if (r.frame() instanceof Ping p) {
                  onPing.accept(p);
                  return false;
                }
                // A pong only answers this node's heartbeat: its arrival was the point.
                return !(r.frame() instanceof Pong);
              }
              return true;
            })
        .batchWeighted(
            RunnerGateway.BATCH_WEIGHT,
            RunnerGateway::weight,
            RunnerEdge::batchOf,
            (batch, f) -> {
              batch.add(f);
              return batch;
            })
        .mapAsync(RunnerGateway.IN_FLIGHT, toGateway::apply)
        .to(Sink.ignore());
  }

  /**
   * How long a socket's outbound may stay quiet before this node pings the runner: the runner's
   * liveness interval when shorter than the heartbeat. A runner gives up a hub it does not hear
   * from; while its frames wait for a brain that does not answer (moving, or frozen on another
   * node), this socket's reading is back-pressured and the runner's own pings wait unread, so the
   * node speaks first: the runner hears that the node and the path to it are alive
   * (docs/runner-protocol.md, "Liveness").
   */
  static java.time.Duration heartbeat(ProtocolConfig config) {
    return config.pingInterval().compareTo(config.heartbeatIdle()) < 0
        ? config.pingInterval()
        : config.heartbeatIdle();
  }

  private static List<Object> batchOf(Object first) {
    List<Object> batch = new ArrayList<>();
    batch.add(first);
    return batch;
  }

  private static Optional<String> bearer(HttpRequest request) {
    return request
        .getHeader(Authorization.class)
        .map(Authorization::credentials)
        .filter(c -> c.scheme().equalsIgnoreCase("Bearer"))
        .map(c -> c.token());
  }
}
