package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.hub.HubCbor;
import io.capsule.hub.runner.ServerSocket.Control;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.OrderedQueue;
import io.capsule.protocol.ws.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;

/**
 * One runner WebSocket on the node that accepted it: the node-local half of a connection, while the
 * project's state lives in {@link HubCore} (the brain), which may run on another node of the
 * cluster. The socket's streams talk to this actor; this actor talks to the brain only with
 * serializable messages (frames as JSON text, actor refs, records), so the brain can be anywhere.
 *
 * <p>Lifecycle: it announces the connection to the brain ({@link Brain#open}), holds the runner's
 * first frame until the brain answers {@link Welcome} (announcing again every {@link
 * #REANNOUNCE_EVERY}, as an announcement can be lost while the brain moves; bounded by {@code
 * welcomeTimeout}: no answer closes the socket with 4013 and {@code E-HUB-007}, and the runner
 * dials again), then forwards frames and carries the brain's frames and closes to the socket. It
 * watches the brain: when the brain stops (its node died, or sharding moved it) the socket closes
 * with 4012 and {@code E-HUB-007}, and the runner resumes against the brain's next incarnation,
 * which restored its sequencing from the journal.
 */
final class RunnerGateway {
  private static final FrameCodec CODEC = FrameCodec.shared();

  /**
   * The brain moved: the runner reconnects and resumes. A private code (4000-4999), as 1012
   * (service restart) is refused by Pekko's client as an invalid close code.
   */
  static final int MOVED = CloseCodes.MOVED;

  /** Try again later: no brain answered in time (private, for the same reason as 1013 would be). */
  static final int TRY_AGAIN = 4013;

  sealed interface Command {}

  /** From the brain: it knows the connection; talk to {@code core} from now on. */
  record Welcome(ActorRef<HubCore.Command> core) implements Command, HubCbor {}

  /** From the brain: a frame for the runner, encoded. */
  record ToRunner(String text) implements Command, HubCbor {}

  /** From the brain: end the socket ({@code code} > 0: a close frame; 0: drop; -1: abort). */
  record EndSocket(int code, String reason) implements Command, HubCbor {
    static final int DROP = 0;
    static final int ABORT = -1;
  }

  /** The brain's answer to one {@link HubCore.Inbound}: the next frames may be read. */
  record Consumed(String connId) implements HubCbor {}

  /**
   * From the socket's inbound stream: decoded frames in the order they came (each a {@link
   * Wire.Read} with its text, a {@link Frame}, or a refusal), answered when consumed.
   */
  record FromRunner(List<Object> frames, ActorRef<Consumed> replyTo) implements Command {}

  /** The socket's outbound side ended. */
  record SocketEnded(String reason) implements Command {}

  /**
   * The runner pinged: answered here, on the node that holds the socket, not by the brain. A pong
   * then says this node runs and the path to it works, even while the brain moves or waits for its
   * store (a brain's pong would make a runner leave a node for a slow store, only to wait for the
   * same brain elsewhere); a node that can no longer reach its cluster lets its sockets go itself
   * ({@link CutOff}). Docs: docs/runner-protocol.md, "Liveness".
   */
  record Pinged(String nonce) implements Command {}

  /** This node is cut off from its cluster: close with 4014 ({@code E-HUB-009}). */
  record CutOff() implements Command {}

  private record BrainGone() implements Command {}

  private record NoWelcome() implements Command {}

  /** Time to announce the connection again: the brain has not answered yet. */
  private record Reannounce() implements Command {}

  /**
   * How often a gateway announces its connection again until the brain answers. While the brain's
   * node is dead but not yet removed, sharding still sends to it and the announcement is lost;
   * without a second one the socket would wait the whole welcome timeout (20 s) and then make the
   * runner dial again. Once a second costs one small message per waiting socket, and the brain
   * (HubCore) welcomes a connection it already knows again instead of opening it twice.
   */
  static final Duration REANNOUNCE_EVERY = Duration.ofSeconds(1);

  /**
   * Batches of one socket's frames on their way to the brain and not yet answered ({@link
   * Consumed}). One at a time made every frame wait for a round trip to the brain (across the
   * cluster when it lives on another node): a runner replaying 320 frames after a failover took ~10
   * s at load 30. Eight lets the brain batch a connection's frames into one journal write; they
   * stay in order (one sender, one receiver), and the brain's backlog bound still stops the socket.
   */
  static final int IN_FLIGHT = 8;

  /**
   * What one batch may weigh: the frames' text, each counted as at least {@link #MIN_WEIGHT}, so a
   * batch holds at most 64 frames; a single frame above it (up to the frame cap) goes alone. Frames
   * are batched only while {@link #IN_FLIGHT} batches wait for the brain: a busy brain then reads
   * what came meanwhile in one message, instead of one message, one ask and one answer per frame
   * (which was a tenth of the hub's CPU per persisted frame). In flight per socket at most {@code
   * IN_FLIGHT} times the larger of this and the frame cap, as with single frames at the cap.
   */
  static final long BATCH_WEIGHT = 256 * 1024;

  private static final long MIN_WEIGHT = BATCH_WEIGHT / 64;

  /** A decoded frame's weight in a batch: see {@link #BATCH_WEIGHT}. */
  static long weight(Object frame) {
    return frame instanceof Wire.Read r ? Math.max(MIN_WEIGHT, r.text().length()) : MIN_WEIGHT;
  }

  /** Where a gateway announces its connection: the brain's actor here, or its sharded entity. */
  @FunctionalInterface
  interface Brain {
    void open(RunnerOpened opened);
  }

  private final ActorContext<Command> ctx;
  private final String connId;
  private final OrderedQueue<Message> out;
  private final CompletableFuture<Control> control;

  private RunnerGateway(
      ActorContext<Command> ctx,
      String connId,
      OrderedQueue<Message> out,
      CompletableFuture<Control> control) {
    this.ctx = ctx;
    this.connId = connId;
    this.out = out;
    this.control = control;
  }

  static Behavior<Command> create(
      String connId,
      RunnerKey key,
      String tokenProject,
      Brain brain,
      Duration welcomeTimeout,
      OrderedQueue<Message> out,
      CompletableFuture<Control> control) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    Behaviors.withStash(
                        // The inbound stream has at most IN_FLIGHT frames unanswered: twice that
                        // is plenty, and a full stash is a bug, not a load.
                        2 * IN_FLIGHT,
                        stash -> {
                          RunnerOpened opened =
                              new RunnerOpened(connId, key, tokenProject, ctx.getSelf());
                          brain.open(opened);
                          timers.startSingleTimer(new NoWelcome(), welcomeTimeout);
                          timers.startTimerWithFixedDelay(new Reannounce(), REANNOUNCE_EVERY);
                          return new RunnerGateway(ctx, connId, out, control)
                              .waiting(
                                  stash,
                                  timers,
                                  welcomeTimeout,
                                  () -> brain.open(opened),
                                  System.nanoTime());
                        })));
  }

  private Behavior<Command> waiting(
      StashBuffer<Command> stash,
      TimerScheduler<Command> timers,
      Duration welcomeTimeout,
      Runnable announce,
      long since) {
    return Behaviors.receive(Command.class)
        .onMessage(
            Reannounce.class,
            r -> {
              announce.run();
              return Behaviors.same();
            })
        .onMessage(
            Welcome.class,
            w -> {
              timers.cancelAll();
              long waited = Duration.ofNanos(System.nanoTime() - since).toMillis();
              if (waited >= REANNOUNCE_EVERY.toMillis()) {
                // Said only when the brain was away (moving after a node's death, or restoring):
                // how long this runner's resume waited for it.
                ctx.getLog().info("{}: the hub brain answered after {} ms", connId, waited);
              }
              ctx.watchWith(w.core(), new BrainGone());
              return stash.unstashAll(active(w.core()));
            })
        .onMessage(
            NoWelcome.class,
            n -> {
              timers.cancelAll();
              ctx.getLog().warn("{}: no hub brain answered within {}", connId, welcomeTimeout);
              control.complete(
                  new ServerSocket.Close(
                      TRY_AGAIN, Code.E_HUB_007.id() + " no hub answered; reconnect"));
              return Behaviors.same();
            })
        .onMessage(SocketEnded.class, e -> ended())
        .onMessage(Pinged.class, this::pong)
        .onMessage(
            CutOff.class,
            c -> {
              timers.cancelAll();
              return cutOff();
            })
        .onAnyMessage(
            m -> {
              stash.stash(m);
              return Behaviors.same();
            })
        .build();
  }

  private Behavior<Command> active(ActorRef<HubCore.Command> core) {
    return Behaviors.receive(Command.class)
        .onMessage(
            FromRunner.class,
            f -> {
              core.tell(inbound(f));
              return Behaviors.same();
            })
        .onMessage(
            ToRunner.class,
            t -> {
              out.offer(TextMessage.create(t.text()));
              return Behaviors.same();
            })
        .onMessage(
            EndSocket.class,
            e -> {
              control.complete(
                  switch (e.code()) {
                    case EndSocket.DROP -> new ServerSocket.Drop();
                    case EndSocket.ABORT -> new ServerSocket.Abort();
                    default -> new ServerSocket.Close(e.code(), e.reason());
                  });
              return Behaviors.same();
            })
        .onMessage(
            BrainGone.class,
            g -> {
              ctx.getLog().info("{}: the hub brain stopped; the runner reconnects", connId);
              control.complete(
                  new ServerSocket.Close(
                      MOVED, Code.E_HUB_007.id() + " the hub moved; reconnect and resume"));
              return Behaviors.same();
            })
        .onMessage(
            SocketEnded.class,
            e -> {
              core.tell(new HubCore.Closed(connId, e.reason()));
              return ended();
            })
        .onMessage(Pinged.class, this::pong)
        .onMessage(CutOff.class, c -> cutOff())
        .onMessage(Welcome.class, w -> Behaviors.same())
        .onMessage(NoWelcome.class, n -> Behaviors.same())
        .onMessage(Reannounce.class, r -> Behaviors.same())
        .build();
  }

  private Behavior<Command> pong(Pinged p) {
    out.offer(Wire.text(new Pong(p.nonce())));
    return Behaviors.same();
  }

  private Behavior<Command> cutOff() {
    ctx.getLog().warn("{}: this node is cut off from its cluster; closing with 4014", connId);
    control.complete(
        new ServerSocket.Close(
            CloseCodes.CUT_OFF,
            Code.E_HUB_009.id() + " this hub node is cut off from its cluster; use another"));
    return Behaviors.same();
  }

  private Behavior<Command> ended() {
    out.complete();
    control.complete(new ServerSocket.Drop());
    return Behaviors.stopped();
  }

  /** The gateway's frame or refusal, back as the protocol's objects on the brain's side. */
  static Object decode(HubCore.InFrame in) {
    if (in.text() == null) {
      Code code = Code.byId(in.refusedCode()).orElse(Code.E_PRO_002);
      return new FrameRejected(code, in.refusedMessage());
    }
    if (in.decoded() != null) {
      return in.decoded();
    }
    try {
      return CODEC.decode(in.text(), false);
    } catch (FrameRejected r) {
      return r;
    }
  }

  private HubCore.Inbound inbound(FromRunner f) {
    List<HubCore.InFrame> frames = new ArrayList<>(f.frames().size());
    for (Object o : f.frames()) {
      frames.add(inFrame(o));
    }
    return new HubCore.Inbound(connId, frames, f.replyTo());
  }

  private static HubCore.InFrame inFrame(Object o) {
    if (o instanceof FrameRejected r) {
      return new HubCore.InFrame(null, null, r.diagnostic().code().id(), r.diagnostic().message());
    }
    if (o instanceof Wire.Read r) {
      // As the runner sent it, with its decoding: no second encoding, nor decoding in a local
      // brain.
      return new HubCore.InFrame(r.text(), r.frame(), null, null);
    }
    Frame frame = (Frame) o;
    return new HubCore.InFrame(CODEC.encodeToString(frame), frame, null, null);
  }
}
