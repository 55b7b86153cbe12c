package io.capsule.hub.runner;

import com.fasterxml.jackson.annotation.JsonIgnore;
import io.capsule.config.diag.Code;
import io.capsule.hub.HubCbor;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.hub.runner.BrainSession.Conn;
import io.capsule.hub.standing.NodeStanding;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.seq.SeqState;
import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.Disconnect;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
 * HubRestore}). The brain never waits for the store: it decides at once (its sequencing and
 * ownership change as each message arrives) and hands the entries with their effects (acks, events,
 * the runner's frames, API replies) to {@link BrainJournal}, which runs the effects once the
 * entries are stored, batching what arrives meanwhile into the next write. When the journal fails,
 * the hub stops: connections close with 1011 and the event stream fails with {@code E-PRO-010}.
 *
 * <p>The protocol's rules for one runner's frames (hello and resume, ownership, held-frame budget,
 * apply-then-ack) are in {@link RunnerFrames}; the per-runner state and its arithmetic in {@link
 * BrainSession}; the write queue and the order of effects in {@link BrainJournal}; taking a dead
 * runner's tasks back in {@link RunnerDeath}. Over 400 lines: the message handlers that remain are
 * the brain's one sequence of decisions (connections, assignments, cancels, deaths, stopping) and
 * read best together.
 */
final class HubCore extends AbstractBehavior<HubCore.Command> {
  // Not sealed: RunnerOpened, which the project's entity (another package) passes on, is top-level.
  interface Command {}

  /**
   * Frames from the runner, in the order it sent them, read together by its gateway (what arrived
   * while the brain was busy: one message for them all, not one each); answered once consumed,
   * which is how a slow brain back-pressures the socket.
   */
  record Inbound(String id, List<InFrame> frames, ActorRef<RunnerGateway.Consumed> replyTo)
      implements Command, HubCbor {}

  /**
   * One frame of an {@link Inbound} as JSON text, or (with {@code text} null) the gateway's refusal
   * of what it read ({@code refusedCode}, {@code refusedMessage}). {@code decoded} is the gateway's
   * own decoding of that text, for a brain in the same JVM (no second decoding per frame); it does
   * not cross nodes (null after serialization: the brain decodes the text).
   */
  record InFrame(
      String text, @JsonIgnore Frame decoded, String refusedCode, String refusedMessage) {}

  record Closed(String id, String reason) implements Command, HubCbor {}

  record Assign(RunnerKey key, TaskAssign assign, CompletableFuture<TaskAssign> reply)
      implements Command {}

  record Cancel(
      String projectId, String taskId, String reason, CompletableFuture<Optional<TaskCancel>> reply)
      implements Command {}

  record Kick(RunnerKey key, Disconnect mode, CompletableFuture<Boolean> reply)
      implements Command {}

  /**
   * Ends every connection, completes the event stream, stops: after the writes already queued are
   * stored and their effects ran (bounded by the journal's write bound), so what the store keeps
   * was also published and acked. Nothing new is taken meanwhile.
   */
  record Shutdown() implements Command {}

  private record HelloTimeout(String id) implements Command {}

  /** The gateway stopped without a {@link Closed} (its node died): as if it had closed. */
  private record GatewayGone(String id) implements Command {}

  private final ProtocolConfig config;
  private final TimerScheduler<Command> timers;
  private final EventBatches events;
  private final ConcurrentMap<RunnerKey, RunnerInfo> snapshot;
  private final BrainJournal journal;
  private final RunnerFrames frames;
  private final HubTraffic traffic;
  private final Map<String, Conn> conns = new HashMap<>();

  /** Shutdown asked: the queued writes finish, nothing new is taken. */
  private boolean stopping;

  /** Completed once this actor has stopped, however it stopped ({@link HubServer#close}). */
  private final CompletableFuture<Done> stopped;

  private final Map<RunnerKey, BrainSession> sessions;
  private final Map<String, RunnerKey> taskOwner; // key: project + '\0' + task

  static Behavior<Command> create(
      ProtocolConfig config,
      EventBatches events,
      ConcurrentMap<RunnerKey, RunnerInfo> snapshot,
      HubJournal journal,
      HubRestore restored,
      CompletableFuture<Done> stopped) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new HubCore(
                        ctx, timers, config, events, snapshot, journal, restored, stopped)));
  }

  private HubCore(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      ProtocolConfig config,
      EventBatches events,
      ConcurrentMap<RunnerKey, RunnerInfo> snapshot,
      HubJournal journal,
      HubRestore restored,
      CompletableFuture<Done> stopped) {
    super(ctx);
    this.stopped = stopped;
    this.timers = timers;
    this.config = config;
    this.events = events;
    this.snapshot = snapshot;
    NodeStanding standing = NodeStanding.get(ctx.getSystem());
    this.journal = new BrainJournal(journal, ctx, timers, events::drained, standing::cutOff);
    this.traffic = HubTraffic.get(ctx.getSystem());
    this.sessions = new HashMap<>();
    restored
        .runners()
        .forEach(
            (key, r) -> {
              BrainSession s = new BrainSession(r.seq());
              s.openTasks.addAll(r.openTasks());
              sessions.put(key, s);
              publish(key, s); // a restored runner: known, not connected, with its open tasks
              watchDeath(key, s);
            });
    this.taskOwner = new HashMap<>(restored.taskOwner());
    // Taken back before the restart and not placed again: to the queue once more.
    restored.taken().forEach((key, tasks) -> events.offer(new HubEvent.Reclaimed(key, tasks)));
    this.frames =
        new RunnerFrames(
            config,
            getContext().getLog(),
            events,
            snapshot,
            this.journal,
            sessions,
            taskOwner,
            traffic);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(RunnerOpened.class, this::onRunnerOpened)
        .onMessage(Inbound.class, this::onInbound)
        .onMessage(Closed.class, this::onClosed)
        .onMessage(GatewayGone.class, g -> onClosed(new Closed(g.id(), "its node left")))
        .onMessage(HelloTimeout.class, this::onHelloTimeout)
        .onMessage(RunnerDeath.DeadAfter.class, this::onDeadAfter)
        .onMessage(Assign.class, this::onAssign)
        .onMessage(Cancel.class, this::onCancel)
        .onMessage(Kick.class, this::onKick)
        .onMessage(BrainJournal.Written.class, this::onWritten)
        .onMessage(
            BrainJournal.Recheck.class,
            r -> {
              journal.onRecheck();
              return this;
            })
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
      frames.refuse(c, Code.E_PRO_009, "no hello within " + config.helloTimeout());
      c.end(CloseCodes.POLICY_VIOLATION, "E-PRO-009");
    }
    return this;
  }

  private Behavior<Command> onInbound(Inbound in) {
    if (stopping) {
      return this; // not read, not acked: the runner sends it again to the next hub
    }
    Conn c = conns.get(in.id());
    if (c == null) {
      in.replyTo().tell(new RunnerGateway.Consumed(in.id()));
      return this;
    }
    for (InFrame f : in.frames()) {
      read(c, f);
    }
    journal.answer(in);
    return this;
  }

  private void read(Conn c, InFrame in) {
    Object frame = RunnerGateway.decode(in);
    if (frame instanceof FrameRejected r) {
      frames.onRejected(c, r);
    } else if (c.hello == null) {
      if (frame instanceof Hello h) {
        timers.cancel("hello-" + c.opened.id());
        timers.cancel(RunnerDeath.timer(c.key())); // back in time: it keeps its tasks
        frames.onHello(c, h);
      } else {
        getContext().getLog().warn("{}: {} before hello, dropped", c.key(), frame);
      }
    } else {
      frames.onFrame(c, (Frame) frame, in.text());
    }
  }

  private Behavior<Command> onWritten(BrainJournal.Written w) {
    // The effects the write released publish their events into the stream as one batch.
    if (!events.holding(() -> journal.onWritten(w))) {
      return halt();
    }
    if (stopping) {
      return journal.idle() ? stopNow() : this;
    }
    return this;
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
      RunnerInfo info = s.info(c.key());
      journal.then(
          c.key(),
          List.of(),
          0,
          () -> {
            snapshot.put(c.key(), info);
            events.offer(new HubEvent.RunnerDown(c.key(), closed.reason()));
          });
      watchDeath(c.key(), s);
    }
    return this;
  }

  private void watchDeath(RunnerKey key, BrainSession s) {
    RunnerDeath.watch(timers, key, s, config.deadAfter());
  }

  /**
   * Gone past dead-after: each open task's {@link RunnerDeath cancel} is journaled for the runner,
   * then (once stored, so the task's new assignment is journaled after it) the queue hears which
   * tasks to place again.
   */
  private Behavior<Command> onDeadAfter(RunnerDeath.DeadAfter d) {
    BrainSession s = sessions.get(d.key());
    if (stopping || s == null || s.conn != null || s.openTasks.isEmpty()) {
      return this; // back, or nothing to take
    }
    List<RunnerDeath.Taken> taken =
        RunnerDeath.takeBack(d.key(), s, taskOwner, config, getContext().getLog());
    taken.forEach(
        t -> t.cancel().ifPresent(c -> send(s, d.key(), c, () -> {}, new CompletableFuture<>())));
    List<String> ids = taken.stream().map(RunnerDeath.Taken::taskId).toList();
    RunnerInfo info = s.info(d.key());
    journal.then(
        d.key(),
        List.of(),
        0,
        () -> {
          snapshot.put(d.key(), info);
          events.offer(new HubEvent.Reclaimed(d.key(), ids));
        });
    return this;
  }

  private Behavior<Command> onAssign(Assign a) {
    if (stopping) {
      a.reply().completeExceptionally(new IllegalStateException("the hub is shutting down"));
      return this;
    }
    BrainSession s = sessions.computeIfAbsent(a.key(), k -> new BrainSession(SeqState.of(config)));
    BrainSession.Numbered<TaskAssign> sent;
    try {
      sent = s.number(a.key(), a.assign(), config.frameCapBytes());
    } catch (ProtocolException e) {
      a.reply().completeExceptionally(e);
      return this;
    }
    s.openTasks.add(sent.frame().taskId());
    taskOwner.put(HubRestore.owned(a.key().projectId(), sent.frame().taskId()), a.key());
    RunnerInfo info = s.info(a.key());
    send(s, a.key(), sent, () -> snapshot.put(a.key(), info), a.reply());
    watchDeath(a.key(), s); // assigned to a runner that is away: it has dead-after to come back
    return this;
  }

  private Behavior<Command> onCancel(Cancel c) {
    if (stopping) {
      c.reply().completeExceptionally(new IllegalStateException("the hub is shutting down"));
      return this;
    }
    RunnerKey key = taskOwner.get(HubRestore.owned(c.projectId(), c.taskId()));
    BrainSession s = key == null ? null : sessions.get(key);
    if (s == null || s.seq.isFinished(c.taskId())) {
      c.reply().complete(Optional.empty()); // unknown or finished: a cancel changes nothing
      return this;
    }
    BrainSession.Numbered<TaskCancel> sent;
    try {
      sent = s.number(key, new TaskCancel(c.taskId(), c.reason()), config.frameCapBytes());
    } catch (ProtocolException e) {
      c.reply().completeExceptionally(e);
      return this;
    }
    CompletableFuture<TaskCancel> reply = new CompletableFuture<>();
    reply.whenComplete(
        (t, e) -> {
          if (e != null) {
            c.reply().completeExceptionally(e);
          } else {
            c.reply().complete(Optional.of(t));
          }
        });
    send(s, key, sent, () -> {}, reply);
    return this;
  }

  /**
   * Journals a numbered hub frame; once stored, sends it to the connection the runner had when it
   * was numbered (a connection that said hello since gets it in its resume instead, so it arrives
   * once), runs {@code then} and completes {@code reply}.
   */
  private <F extends SequencedFrame> void send(
      BrainSession s,
      RunnerKey key,
      BrainSession.Numbered<F> sent,
      Runnable then,
      CompletableFuture<F> reply) {
    traffic.sent(); // sent now or replayed later
    Conn to = s.live();
    journal.then(
        key,
        List.of(sent.entry()),
        sent.text().length(),
        () -> {
          if (to != null) {
            to.sendText(sent.text());
          }
          then.run();
          reply.complete(sent.frame());
        },
        reply);
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
    stopping = true;
    return journal.idle() ? stopNow() : this;
  }

  private Behavior<Command> stopNow() {
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
    journal.abandon(
        journal.failure() != null
            ? journal.failure()
            : new IllegalStateException("the hub's brain stopped before the store confirmed"));
    if (journal.failure() == null) {
      events.complete();
    }
    stopped.complete(Done.getInstance());
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

  private void publish(RunnerKey key, BrainSession s) {
    snapshot.put(key, s.info(key));
  }
}
