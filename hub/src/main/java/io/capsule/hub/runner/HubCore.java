package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.HubCbor;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.hub.runner.BrainSession.Conn;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.codec.FrameCodec;
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
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.Disconnect;
import io.capsule.protocol.ws.OrderedQueue;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentMap;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The project's brain for runners: one {@link BrainSession} per runner (its {@link SeqState}
 * outlives connections), the connection each runner is on, which runner owns which task. Sockets
 * are served by {@link RunnerGateway}s on any node of the cluster; they reach this actor only with
 * serializable messages ({@link RunnerOpened}, {@link Inbound}, {@link Closed}) and it answers them
 * the same way, so it may run on another node than the socket. An {@link Inbound} is answered once
 * consumed, which is how a slow event consumer or a slow store back-pressures the socket instead of
 * growing a buffer.
 *
 * <p>Durability: every frame the hub sends and every runner frame it applies goes through the
 * {@link HubJournal} first (see there); a hub starts from what its journal recorded ({@link
 * HubRestore}). When the journal fails, the hub stops: connections close with 1011 and the event
 * stream fails with {@code E-PRO-010}.
 *
 * <p>Over 400 lines: the protocol's rules for one runner's frames (hello and resume, ownership,
 * held-frame budget, apply-then-ack) read as one sequence here; the per-runner state and its
 * arithmetic are in {@link BrainSession}, the journal's failure in {@link BrainJournal}.
 */
final class HubCore extends AbstractBehavior<HubCore.Command> {
  private static final FrameCodec CODEC = FrameCodec.shared();

  // Not sealed: RunnerOpened, which the project's entity (another package) passes on, is top-level.
  interface Command {}

  /**
   * One frame from the runner as JSON text, or (with {@code frame} null) the gateway's refusal of
   * what it read ({@code refusedCode}, {@code refusedMessage}); answered once consumed, which is
   * how a slow brain back-pressures the socket.
   */
  record Inbound(
      String id,
      String frame,
      String refusedCode,
      String refusedMessage,
      ActorRef<RunnerGateway.Consumed> replyTo)
      implements Command, HubCbor {}

  record Closed(String id, String reason) implements Command, HubCbor {}

  record Assign(RunnerKey key, TaskAssign assign, CompletableFuture<TaskAssign> reply)
      implements Command {}

  record Cancel(
      String projectId, String taskId, String reason, CompletableFuture<Optional<TaskCancel>> reply)
      implements Command {}

  record Kick(RunnerKey key, Disconnect mode, CompletableFuture<Boolean> reply)
      implements Command {}

  /** Ends every connection, completes the event stream, stops. */
  record Shutdown() implements Command {}

  private record HelloTimeout(String id) implements Command {}

  /** The gateway stopped without a {@link Closed} (its node died): as if it had closed. */
  private record GatewayGone(String id) implements Command {}

  private final ProtocolConfig config;
  private final TimerScheduler<Command> timers;
  private final OrderedQueue<HubEvent> events;
  private final ConcurrentMap<RunnerKey, RunnerInfo> snapshot;
  private final BrainJournal journal;
  private final Map<String, Conn> conns = new HashMap<>();
  private final Map<RunnerKey, BrainSession> sessions;
  private final Map<String, RunnerKey> taskOwner; // key: project + '\0' + task

  static Behavior<Command> create(
      ProtocolConfig config,
      OrderedQueue<HubEvent> events,
      ConcurrentMap<RunnerKey, RunnerInfo> snapshot,
      HubJournal journal,
      HubRestore restored) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new HubCore(ctx, timers, config, events, snapshot, journal, restored)));
  }

  private HubCore(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      ProtocolConfig config,
      OrderedQueue<HubEvent> events,
      ConcurrentMap<RunnerKey, RunnerInfo> snapshot,
      HubJournal journal,
      HubRestore restored) {
    super(ctx);
    this.timers = timers;
    this.config = config;
    this.events = events;
    this.snapshot = snapshot;
    this.journal = new BrainJournal(journal);
    this.sessions = new HashMap<>();
    restored
        .runners()
        .forEach(
            (key, r) -> {
              BrainSession s = new BrainSession(r.seq());
              s.openTasks.addAll(r.openTasks());
              sessions.put(key, s);
              publish(key, s); // a restored runner: known, not connected, with its open tasks
            });
    this.taskOwner = new HashMap<>(restored.taskOwner());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(RunnerOpened.class, this::onRunnerOpened)
        .onMessage(Inbound.class, this::onInbound)
        .onMessage(Closed.class, this::onClosed)
        .onMessage(GatewayGone.class, g -> onClosed(new Closed(g.id(), "its node left")))
        .onMessage(HelloTimeout.class, this::onHelloTimeout)
        .onMessage(Assign.class, this::onAssign)
        .onMessage(Cancel.class, this::onCancel)
        .onMessage(Kick.class, this::onKick)
        .onMessage(Shutdown.class, s -> onShutdown())
        .onSignal(PostStop.class, s -> onStopped())
        .build();
  }

  private Behavior<Command> onRunnerOpened(RunnerOpened o) {
    if (conns.containsKey(o.id())) {
      // The gateway announced again before our welcome reached it (RunnerGateway
      // .REANNOUNCE_EVERY): welcome it again, but keep the connection's state (its hello).
      o.gateway().tell(new RunnerGateway.Welcome(getContext().getSelf()));
      return this;
    }
    conns.put(o.id(), new Conn(o));
    getContext().watchWith(o.gateway(), new GatewayGone(o.id()));
    o.gateway().tell(new RunnerGateway.Welcome(getContext().getSelf()));
    timers.startSingleTimer("hello-" + o.id(), new HelloTimeout(o.id()), config.helloTimeout());
    return this;
  }

  private Behavior<Command> onHelloTimeout(HelloTimeout t) {
    Conn c = conns.get(t.id());
    if (c != null && c.hello == null) {
      refuse(c, Code.E_PRO_009, "no hello within " + config.helloTimeout());
      c.end(CloseCodes.POLICY_VIOLATION, "E-PRO-009");
    }
    return this;
  }

  private Behavior<Command> onInbound(Inbound in) {
    Conn c = conns.get(in.id());
    RunnerGateway.Consumed consumed = new RunnerGateway.Consumed(in.id());
    if (c == null) {
      in.replyTo().tell(consumed);
      return this;
    }
    List<CompletionStage<Done>> waits = new ArrayList<>();
    Object frame = RunnerGateway.decode(in);
    if (frame instanceof FrameRejected r) {
      onRejected(c, r, waits);
    } else if (c.hello == null) {
      if (frame instanceof Hello h) {
        onHello(c, h, waits);
      } else {
        getContext().getLog().warn("{}: {} before hello, dropped", c.key(), frame);
      }
    } else {
      onFrame(c, (Frame) frame, waits);
    }
    // Never wait for our own outbound here (the runner may be waiting for us to read before it
    // reads: a cross-wait through two full TCP buffers). Replies written here (acks, pongs, error
    // frames) are bounded by what the runner sends, which its replay bound limits.
    CompletableFuture.allOf(
            waits.stream()
                .map(CompletionStage::toCompletableFuture)
                .toArray(CompletableFuture[]::new))
        .whenComplete((d, e) -> in.replyTo().tell(consumed));
    return journal.failure() == null ? this : halt();
  }

  private void onRejected(Conn c, FrameRejected r, List<CompletionStage<Done>> waits) {
    getContext().getLog().warn("{}: frame refused: {}", c.opened.key(), r.diagnostic());
    waits.add(events.offer(new HubEvent.Refused(c.opened.key(), r.diagnostic())));
    if (c.has(Capabilities.ERROR_FRAMES)) {
      c.send(new ErrorFrame(r.code().id(), r.diagnostic().message()));
    }
  }

  private void onHello(Conn c, Hello h, List<CompletionStage<Done>> waits) {
    RunnerKey key = c.opened.key();
    timers.cancel("hello-" + c.opened.id());
    if (!h.projectId().equals(c.opened.tokenProject())) {
      Diagnostic d =
          Diagnostic.of(
              Code.E_PRO_008,
              "hello.project_id '"
                  + h.projectId()
                  + "' differs from the token's '"
                  + c.opened.tokenProject()
                  + "'");
      getContext().getLog().warn("{}: {}", key, d);
      waits.add(events.offer(new HubEvent.Refused(key, d)));
      c.end(CloseCodes.PROJECT_MISMATCH, "E-PRO-008");
      return;
    }
    BrainSession s = sessions.computeIfAbsent(key, k -> new BrainSession(SeqState.of(config)));
    if (s.attach(c, h) != null) {
      waits.add(events.offer(new HubEvent.RunnerDown(key, "replaced by a new connection")));
    }
    publish(key, s); // before the event: whoever sees RunnerUp must find the runner connected
    waits.add(events.offer(new HubEvent.RunnerUp(key, h)));
    getContext().getLog().info("{}: hello on connection {}", key, c.opened.id());
    HubTraffic.get(getContext().getSystem()).replayed(s.resume(c, h));
  }

  private void onFrame(Conn c, Frame f, List<CompletionStage<Done>> waits) {
    RunnerKey key = c.opened.key();
    BrainSession s = sessions.get(key);
    if (s == null || s.conn != c) {
      return; // a replaced connection's late frame: the new one replays it
    }
    if (f instanceof Ping p) {
      c.send(new Pong(p.nonce()));
    } else if (f instanceof TaskProgress || f instanceof TaskReport) {
      SequencedFrame sf = (SequencedFrame) f;
      if (!s.openTasks.contains(sf.taskId()) && !s.seq.isFinished(sf.taskId())) {
        // Not placed on this runner: never applied, never held (a runner could otherwise fill
        // the hub with frames of tasks it invents). The connection stays: its own tasks go on.
        onRejected(
            c,
            BrainSession.notPlaced(
                key, sf, taskOwner.get(HubRestore.owned(key.projectId(), sf.taskId()))),
            waits);
        return;
      }
      Receipt r = s.seq.receive(sf);
      Optional<String> over = s.overBudget(sf, r, config.heldBytesBudget());
      HubTraffic.get(getContext().getSystem()).held(key, s.heldBytes()); // the gauge
      if (over.isPresent()) {
        refuse(c, Code.E_PRO_013, over.get());
        c.end(CloseCodes.POLICY_VIOLATION, "E-PRO-013");
        return; // over the budget: the connection closes, the runner replays what was held
      }
      boolean reportSeen = f instanceof TaskReport;
      // What one frame applies (itself, and the held ones a filled gap releases) is stored in
      // one write: a task's entity keeps it all or none.
      List<HubJournal.Entry> batch =
          r.applied().stream()
              .map(applied -> new HubJournal.Entry(key, Direction.APPLIED, applied))
              .toList();
      if (!batch.isEmpty() && !journal.write(batch)) {
        return; // not kept, so neither published nor acked: the runner replays it to the next hub
      }
      for (SequencedFrame applied : r.applied()) {
        c.appliedSinceAck++;
        if (applied instanceof TaskReport rep) {
          s.openTasks.remove(rep.taskId());
          taskOwner.remove(HubRestore.owned(key.projectId(), rep.taskId()));
          publish(key, s);
          waits.add(events.offer(new HubEvent.Report(key, rep)));
        } else {
          waits.add(events.offer(new HubEvent.Progress(key, (TaskProgress) applied)));
        }
      }
      if (r.isGap()) {
        getContext()
            .getLog()
            .debug("{}: {} seq {} waits for {}", key, sf.taskId(), sf.seq(), r.expected());
      }
      if (c.has(Capabilities.ACK) && (reportSeen || c.appliedSinceAck >= config.ackEvery())) {
        c.appliedSinceAck = 0;
        c.send(new Ack(s.seq.takeAckMap()));
      }
    } else if (f instanceof ErrorFrame e) {
      getContext().getLog().warn("{}: runner refused a frame: {} {}", key, e.code(), e.message());
    } else if (f instanceof Pong || f instanceof Hello) {
      // Pong: the heartbeat did its job by arriving. A second hello changes nothing.
    } else {
      FrameRejected wrongWay =
          new FrameRejected(Code.E_PRO_002, "a runner does not send '" + f.type() + "'");
      onRejected(c, wrongWay, waits);
    }
  }

  private Behavior<Command> onClosed(Closed closed) {
    Conn c = conns.remove(closed.id());
    timers.cancel("hello-" + closed.id());
    if (c == null) {
      return this;
    }
    getContext().unwatch(c.opened.gateway()); // its gateway ends its own socket
    BrainSession s = sessions.get(c.opened.key());
    if (s != null && s.conn == c) {
      s.conn = null;
      publish(c.opened.key(), s);
      events.offer(new HubEvent.RunnerDown(c.opened.key(), closed.reason()));
    }
    return this;
  }

  private Behavior<Command> onAssign(Assign a) {
    BrainSession s = sessions.computeIfAbsent(a.key(), k -> new BrainSession(SeqState.of(config)));
    try {
      Optional<TaskAssign> sent = s.send(a.key(), a.assign(), config.frameCapBytes(), journal);
      sent.ifPresent(x -> HubTraffic.get(getContext().getSystem()).sent()); // or replayed later
      if (sent.isEmpty()) {
        a.reply().completeExceptionally(journal.failure());
        return halt();
      }
      TaskAssign numbered = sent.get();
      s.openTasks.add(numbered.taskId());
      taskOwner.put(HubRestore.owned(a.key().projectId(), numbered.taskId()), a.key());
      publish(a.key(), s);
      a.reply().complete(numbered);
    } catch (ProtocolException e) {
      a.reply().completeExceptionally(e);
    }
    return this;
  }

  private Behavior<Command> onCancel(Cancel c) {
    RunnerKey key = taskOwner.get(HubRestore.owned(c.projectId(), c.taskId()));
    BrainSession s = key == null ? null : sessions.get(key);
    if (s == null || s.seq.isFinished(c.taskId())) {
      c.reply().complete(Optional.empty()); // unknown or finished: a cancel changes nothing
      return this;
    }
    try {
      Optional<TaskCancel> sent =
          s.send(key, new TaskCancel(c.taskId(), c.reason()), config.frameCapBytes(), journal);
      sent.ifPresent(x -> HubTraffic.get(getContext().getSystem()).sent());
      if (sent.isEmpty()) {
        c.reply().completeExceptionally(journal.failure());
        return halt();
      }
      c.reply().complete(sent);
    } catch (ProtocolException e) {
      c.reply().completeExceptionally(e);
    }
    return this;
  }

  private Behavior<Command> onKick(Kick k) {
    BrainSession s = sessions.get(k.key());
    if (s == null || s.conn == null) {
      k.reply().complete(false);
      return this;
    }
    switch (k.mode()) {
      case CLOSE -> s.conn.end(CloseCodes.NORMAL, "closed by the hub");
      case DROP -> s.conn.end(RunnerGateway.EndSocket.DROP, "");
      case ABORT -> s.conn.end(RunnerGateway.EndSocket.ABORT, "");
    }
    k.reply().complete(true);
    return this;
  }

  private Behavior<Command> onShutdown() {
    for (Conn c : conns.values()) {
      c.end(CloseCodes.NORMAL, "hub shutting down");
    }
    return Behaviors.stopped();
  }

  /**
   * However it stopped (shut down, halted, or stopped with its sharded entity when the brain
   * moves): the event stream ends; gateways learn it by watching this actor.
   */
  private Behavior<Command> onStopped() {
    if (journal.failure() == null) {
      events.complete();
    }
    return this;
  }

  /**
   * The journal failed: stop rather than acknowledge or send what could not be kept. Runners keep
   * their frames and resume against the restarted hub, which restores from the same journal.
   */
  private Behavior<Command> halt() {
    getContext().getLog().error("hub stops: {}", journal.failure().diagnostic());
    for (Conn c : conns.values()) {
      c.end(CloseCodes.INTERNAL_ERROR, "E-PRO-010");
    }
    events.fail(journal.failure());
    return Behaviors.stopped();
  }

  private void refuse(Conn c, Code code, String message) {
    Diagnostic d = Diagnostic.of(code, message);
    getContext().getLog().warn("{}: {}", c.key(), d);
    events.offer(new HubEvent.Refused(c.key(), d));
  }

  private void publish(RunnerKey key, BrainSession s) {
    snapshot.put(key, s.info(key));
  }
}
