package io.capsule.protocol.ws;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.ErrorFrame;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import io.capsule.protocol.tls.ClientTls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.http.javadsl.ConnectionContext;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.headers.Authorization;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.PeerClosedConnectionException;
import org.apache.pekko.http.javadsl.model.ws.WebSocketRequest;
import org.apache.pekko.http.javadsl.model.ws.WebSocketUpgradeResponse;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;

/**
 * The runner client's state: the {@link SeqState}, the current connection, the back-off. Socket and
 * timer callbacks arrive as messages; streams wait on the futures inside them.
 *
 * <p>Over 400 lines: the connection's whole life (dial, the bounded upgrade, hello, resume, replay,
 * heartbeat, back-off) is this one actor's message handling, kept in one file so the order of its
 * transitions reads in one place; the sequencing arithmetic is in {@link SeqState}.
 */
final class RunnerCore extends AbstractBehavior<RunnerCore.Command> {

  sealed interface Command {}

  record Send(SequencedFrame frame, CompletableFuture<SequencedFrame> reply) implements Command {}

  record Stop(CompletableFuture<Done> reply) implements Command {}

  private record Dial() implements Command {}

  private record Upgraded(long id, WebSocketUpgradeResponse response, Throwable failure)
      implements Command {}

  private record Inbound(long id, Object frame, CompletableFuture<Done> done) implements Command {}

  private record Closed(long id, Throwable cause) implements Command {}

  /** The upgrade of connection {@code id} got no answer in time. */
  private record UpgradeDeadline(long id) implements Command {}

  /** One ping interval of connection {@code id} passed ({@link Liveness}). */
  private record LivenessTick(long id) implements Command {}

  /** The latest state, readable from any thread. */
  static final class StateCell {
    private volatile ConnectionState state =
        ConnectionState.of(ConnectionState.Status.CONNECTING, 0);

    ConnectionState get() {
      return state;
    }

    void set(ConnectionState s) {
      state = s;
    }
  }

  private static final class Conn {
    final long id;
    final OrderedQueue<Message> out;
    final Liveness liveness;
    final SharedKillSwitch kill;
    boolean upgraded;
    boolean watched; // the liveness timer runs
    boolean ready;
    Closed closedEarly; // the stream ended before the upgrade answer was handled

    Conn(long id, OrderedQueue<Message> out, Liveness liveness, SharedKillSwitch kill) {
      this.id = id;
      this.out = out;
      this.liveness = liveness;
      this.kill = kill;
    }
  }

  private final RunnerClient.Settings settings;
  private final ProtocolConfig config;
  private final TimerScheduler<Command> timers;
  private final OrderedQueue<SequencedFrame> inbound;
  private final StateCell cell;
  private final SeqState seq;
  private final Materializer mat;
  private final boolean acks;
  private final HubEndpoints endpoints;
  private final RunnerTraffic traffic;
  private Conn conn;
  private boolean everReady;
  private long ids;
  private int attempt;

  static Behavior<Command> create(
      RunnerClient.Settings settings,
      OrderedQueue<SequencedFrame> inbound,
      StateCell cell,
      RunnerTraffic traffic) {
    return Behaviors.setup(
        ctx -> Behaviors.withTimers(t -> new RunnerCore(ctx, t, settings, inbound, cell, traffic)));
  }

  private RunnerCore(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      RunnerClient.Settings settings,
      OrderedQueue<SequencedFrame> inbound,
      StateCell cell,
      RunnerTraffic traffic) {
    super(ctx);
    this.traffic = traffic;
    this.settings = settings;
    this.config = settings.config();
    this.timers = timers;
    this.inbound = inbound;
    this.cell = cell;
    this.seq = SeqState.of(config);
    this.mat = Materializer.matFromSystem(ctx.getSystem());
    this.acks = settings.capabilities().contains(Capabilities.ACK);
    this.endpoints = HubEndpoints.parse(settings.hubUrl());
    ctx.getSelf().tell(new Dial());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Send.class, this::onSend)
        .onMessage(Dial.class, d -> onDial())
        .onMessage(Upgraded.class, this::onUpgraded)
        .onMessage(Inbound.class, this::onInbound)
        .onMessage(Closed.class, this::onClosed)
        .onMessage(UpgradeDeadline.class, this::onUpgradeDeadline)
        .onMessage(LivenessTick.class, this::onLivenessTick)
        .onMessage(Stop.class, this::onStop)
        .build();
  }

  private Behavior<Command> onSend(Send s) {
    SequencedFrame numbered;
    Message message;
    try {
      message = Wire.cappedNext(seq, s.frame(), config.frameCapBytes());
      numbered = seq.emit(s.frame());
    } catch (ProtocolException e) {
      s.reply().completeExceptionally(e);
      return this;
    }
    traffic.sent(1);
    if (conn != null && conn.ready) {
      // Written or not, the frame is safe in the replay buffer: complete either way.
      conn.out.offer(message).whenComplete((d, e) -> s.reply().complete(numbered));
    } else {
      s.reply().complete(numbered);
    }
    return this;
  }

  private Behavior<Command> onDial() {
    long id = ++ids;
    String token;
    try {
      token = settings.tokens().token();
    } catch (ProtocolException e) {
      return retry(OptionalInt.empty(), e.diagnostic().toString());
    }
    Pair<SourceQueueWithComplete<Message>, Source<Message, NotUsed>> out =
        Source.<Message>queue(config.outboundQueue(), OverflowStrategy.backpressure())
            .preMaterialize(mat);
    var self = getContext().getSelf();
    Sink<Message, NotUsed> in =
        Flow.<Message>create()
            .watchTermination(
                (m, done) -> {
                  done.whenComplete((d, e) -> self.tell(new Closed(id, e)));
                  return m;
                })
            .idleTimeout(config.deadAfter())
            .via(Wire.decodeAtRunner(config.frameCapBytes(), mat))
            .mapAsync(
                1,
                f -> {
                  CompletableFuture<Done> done = new CompletableFuture<>();
                  self.tell(new Inbound(id, f, done));
                  return done;
                })
            .to(Sink.ignore());
    SharedKillSwitch kill = KillSwitches.shared("capsule-runner-connection-" + id);
    Source<Message, NotUsed> outbound =
        out.second().keepAlive(config.heartbeatIdle(), Wire::ping).via(kill.flow());
    conn =
        new Conn(
            id,
            new OrderedQueue<>(out.first()),
            new Liveness(config.pingInterval(), config.silenceLimit()),
            kill);
    // Hello goes first, before any heartbeat ping. The resume map cannot change before the
    // connection is up: only a connection brings frames to apply.
    conn.out.offer(
        Wire.text(
            new Hello(
                settings.projectId(),
                settings.runnerVersion(),
                settings.capabilities(),
                seq.resumeMap())));
    setState(ConnectionState.of(ConnectionState.Status.CONNECTING, attempt));
    // wss:// verifies the hub's certificate against settings.tls() (ClientTls): never plain text.
    String url = endpoints.current();
    CompletionStage<WebSocketUpgradeResponse> upgrade =
        Http.get(getContext().getSystem())
            .singleWebSocketRequest(
                WebSocketRequest.create(url).addHeader(Authorization.oauth2(token)),
                Flow.fromSinkAndSourceCoupled(in, outbound),
                url.startsWith("wss:")
                    ? settings.tls().httpsContext()
                    : ConnectionContext.noEncryption(),
                mat)
            .first();
    getContext().pipeToSelf(upgrade, (r, e) -> new Upgraded(id, r, e));
    // A host that accepts the socket and closes it (or keeps it) without an HTTP answer, such as a
    // proxy with no backend, a frozen hub JVM (its kernel still accepts) or a partition, may leave
    // the upgrade answer pending for good: bound it by the hello timeout, the hub's own window for
    // the handshake, or the liveness silence limit when shorter (a hub node answers an upgrade at
    // its edge, as it answers a ping). Not dead-after: a runner that dialed during a short outage
    // would come back only once the hub's dead-after had taken its tasks back.
    timers.startSingleTimer("upgrade", new UpgradeDeadline(id), upgradeBound());
    return this;
  }

  private Behavior<Command> onUpgradeDeadline(UpgradeDeadline d) {
    if (conn == null || conn.id != d.id() || conn.upgraded) {
      return this;
    }
    return lost(
        OptionalInt.empty(),
        conn.closedEarly != null
            ? "the connection ended before the hub answered the upgrade"
            : "no answer to the upgrade within " + upgradeBound().toMillis() + " ms");
  }

  private Duration upgradeBound() {
    return config.silenceLimit().compareTo(config.helloTimeout()) < 0
        ? config.silenceLimit()
        : config.helloTimeout();
  }

  private Behavior<Command> onUpgraded(Upgraded u) {
    if (conn == null || conn.id != u.id()) {
      return this;
    }
    timers.cancel("upgrade");
    if (u.failure() != null) {
      // A certificate that does not verify says so with its code (E-TLS-00x), host and reason.
      String why =
          ClientTls.explain(u.failure(), endpoints.current())
              .map(r -> r.code().id() + " " + r.diagnostic().message())
              .orElse("cannot connect: " + u.failure().getMessage());
      return lost(OptionalInt.empty(), why);
    }
    if (!u.response().isValid()) {
      int status = u.response().response().status().intValue();
      String why =
          status == 401
              ? "E-PRO-007 the hub refused the token (HTTP 401)"
              : "the hub refused the upgrade (HTTP " + status + ")";
      return lost(OptionalInt.of(status), why);
    }
    conn.upgraded = true;
    // From the upgrade on, not from the hub's first ack: a node whose gateway waits for the
    // project's brain (moving after a failover) still answers pings, while a frozen one does not.
    timers.startTimerWithFixedDelay("liveness", new LivenessTick(conn.id), config.pingInterval());
    if (conn.closedEarly != null) {
      return onClosed(conn.closedEarly);
    }
    if (!acks) {
      // Without acks the hub cannot say what it holds: re-send the whole buffer; it drops dups.
      becomeReady(Map.of());
    }
    return this;
  }

  private void becomeReady(Map<String, Long> hubHas) {
    conn.ready = true;
    attempt = 0;
    endpoints.connected();
    List<SequencedFrame> replay = seq.replayListFor(hubHas);
    for (SequencedFrame f : replay) {
      conn.out.offer(Wire.text(f));
    }
    traffic.connected(everReady, replay.size());
    everReady = true;
    getContext()
        .getLog()
        .info(
            "connected to the hub at {}; replaying {} frames", endpoints.current(), seq.buffered());
    setState(ConnectionState.of(ConnectionState.Status.CONNECTED, 0).at(endpoints.current()));
  }

  private Behavior<Command> onInbound(Inbound in) {
    if (conn == null || conn.id != in.id()) {
      in.done().complete(Done.getInstance());
      return this;
    }
    watch(); // a frame may be handled before the upgrade's answer
    conn.liveness.heard();
    List<CompletionStage<Done>> waits = new ArrayList<>();
    Object f = in.frame();
    if (f instanceof FrameRejected r) {
      getContext().getLog().warn("hub frame refused: {}", r.diagnostic());
    } else if (f instanceof Ack a) {
      seq.ack(a.acks());
      if (!conn.ready) {
        becomeReady(a.acks());
      }
    } else if (f instanceof Ping p) {
      conn.out.offer(Wire.text(new Pong(p.nonce())));
    } else if (f instanceof Wire.InvalidAssign bad) {
      // Passed on like any assign: the runner re-checks it and reports the task refused.
      getContext().getLog().warn("task.assign refused by its schema: {}", bad.why().diagnostic());
      Receipt r = seq.receive(bad.assign());
      for (SequencedFrame applied : r.applied()) {
        waits.add(inbound.offer(applied));
      }
    } else if (f instanceof TaskAssign || f instanceof TaskCancel) {
      Receipt r = seq.receive((SequencedFrame) f);
      for (SequencedFrame applied : r.applied()) {
        waits.add(inbound.offer(applied));
      }
    } else if (f instanceof ErrorFrame e) {
      getContext().getLog().warn("the hub refused a frame: {} {}", e.code(), e.message());
    } else if (f instanceof Pong) {
      traffic.pong();
    } else {
      getContext().getLog().warn("unexpected frame from the hub: {}", ((Frame) f).type());
    }
    // Never wait for our own outbound here: the hub may be waiting for us to read before it reads
    // what we write (a cross-wait through two full TCP buffers). Replies written here (pongs) are
    // bounded by the hub's pings.
    CompletableFuture.allOf(
            waits.stream()
                .map(CompletionStage::toCompletableFuture)
                .toArray(CompletableFuture[]::new))
        .whenComplete((d, e) -> in.done().complete(Done.getInstance()));
    return this;
  }

  /**
   * Starts the connection's liveness timer, once: from the upgrade on, not from the hub's first
   * ack, since a node whose gateway waits for the project's brain (moving after a failover) still
   * answers pings, while a frozen one does not.
   */
  private void watch() {
    if (!conn.watched) {
      conn.watched = true;
      timers.startTimerWithFixedDelay("liveness", new LivenessTick(conn.id), config.pingInterval());
    }
  }

  /**
   * A hub that stalls (a frozen JVM, a host gone from the network) keeps its socket open and says
   * nothing: only silence tells. Pings go out only while the hub is quiet (docs/runner-protocol.md,
   * "Liveness").
   */
  private Behavior<Command> onLivenessTick(LivenessTick t) {
    if (conn == null || conn.id != t.id()) {
      return this;
    }
    return switch (conn.liveness.tick()) {
      case ALIVE -> this;
      case PING -> {
        conn.out.offer(Wire.ping());
        yield this;
      }
      case DEAD -> {
        // Aborted, not closed: a close waits for the silent peer's close frame, which may never
        // come (the outbound and inbound are coupled: this ends the TCP connection).
        conn.kill.abort(new SilentHub());
        traffic.silentHub();
        yield lost(
            OptionalInt.empty(),
            "the hub at "
                + endpoints.current()
                + " said nothing for "
                + config.silenceLimit().toMillis()
                + " ms, not even a pong");
      }
    };
  }

  private Behavior<Command> onClosed(Closed c) {
    if (conn == null || conn.id != c.id()) {
      return this;
    }
    if (!conn.upgraded) {
      // Let the upgrade answer speak first: it says more (an HTTP 401, say).
      conn.closedEarly = c;
      return this;
    }
    Throwable cause = c.cause();
    while (cause != null
        && !(cause instanceof PeerClosedConnectionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof PeerClosedConnectionException p) {
      return lost(
          OptionalInt.of(p.closeCode()),
          "the hub closed with " + p.closeCode() + " " + p.closeReason());
    }
    return lost(
        OptionalInt.empty(),
        c.cause() == null
            ? "the connection ended"
            : "the connection failed: " + c.cause().getMessage());
  }

  private Behavior<Command> lost(OptionalInt code, String why) {
    timers.cancel("liveness");
    if (conn != null) {
      conn.out.complete();
      conn = null;
    }
    getContext().getLog().info("hub connection lost: {}", why);
    return retry(code, why);
  }

  private Behavior<Command> retry(OptionalInt code, String why) {
    // Failover: the next URL (round-robin), but the same node after a 4012 (it is fine, its brain
    // moved); the back-off grows once per round of failed URLs.
    boolean moved = code.isPresent() && code.getAsInt() == CloseCodes.MOVED;
    Duration delay = backoff(moved ? endpoints.redial() : endpoints.failed());
    getContext().getLog().info("dialling {} in {} ms", endpoints.current(), delay.toMillis());
    attempt++;
    setState(
        new ConnectionState(ConnectionState.Status.DISCONNECTED, attempt, code, Optional.of(why)));
    timers.startSingleTimer("dial", new Dial(), delay);
    return this;
  }

  /** min · 2^attempt, capped at max, plus up to {@code jitter} of it at random. */
  private Duration backoff(int n) {
    long min = config.backoffMin().toMillis();
    long max = config.backoffMax().toMillis();
    long base = min << Math.min(n, 20);
    base = Math.min(Math.max(base, min), max);
    long extra = (long) (base * config.backoffJitter() * ThreadLocalRandom.current().nextDouble());
    return Duration.ofMillis(base + extra);
  }

  private Behavior<Command> onStop(Stop s) {
    timers.cancelAll();
    if (conn != null) {
      conn.out.complete();
      conn = null;
    }
    inbound.complete();
    setState(ConnectionState.of(ConnectionState.Status.CLOSED, attempt));
    s.reply().complete(Done.getInstance());
    return Behaviors.stopped();
  }

  /**
   * Why a silent connection was aborted. Pekko logs it once; a stack trace would say nothing more
   * than the liveness log line next to it.
   */
  private static final class SilentHub extends Exception {
    private static final long serialVersionUID = 1L;

    SilentHub() {
      super("the hub went silent (capsule.protocol.liveness.silence-limit)", null, false, false);
    }
  }

  private void setState(ConnectionState s) {
    cell.set(s);
    try {
      settings.onState().accept(s);
    } catch (RuntimeException e) {
      getContext().getLog().warn("connection state listener failed", e);
    }
  }
}
