package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.hub.runner.ServerSocket.Control;
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
import io.capsule.protocol.token.TokenClaims;
import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.Disconnect;
import io.capsule.protocol.ws.OrderedQueue;
import io.capsule.protocol.ws.Wire;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentMap;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.http.javadsl.model.ws.Message;

/**
 * The hub's state: one {@link SeqState} per runner (it outlives connections), the connection each
 * runner is on, which runner owns which task. All socket callbacks arrive here as messages; the
 * streams wait on the futures in them, which is how a slow event consumer or a slow runner
 * back-pressures the socket instead of growing a buffer.
 *
 * <p>Durability: every frame the hub sends and every runner frame it applies goes through the
 * {@link HubJournal} first (see there); a hub starts from what its journal recorded ({@link
 * HubRestore}). When the journal fails, the hub stops: connections close with 1011 and the event
 * stream fails with {@code E-PRO-010}.
 */
final class HubCore extends AbstractBehavior<HubCore.Command> {
  private static final FrameCodec CODEC = FrameCodec.shared();

  sealed interface Command {}

  record Opened(
      long id,
      RunnerKey key,
      TokenClaims claims,
      OrderedQueue<Message> out,
      CompletableFuture<Control> control)
      implements Command {}

  /** {@code frame} is a {@link Frame} or a {@link FrameRejected}. */
  record Inbound(long id, Object frame, CompletableFuture<Done> done) implements Command {}

  record Closed(long id, String reason) implements Command {}

  record Assign(RunnerKey key, TaskAssign assign, CompletableFuture<TaskAssign> reply)
      implements Command {}

  record Cancel(
      String projectId, String taskId, String reason, CompletableFuture<Optional<TaskCancel>> reply)
      implements Command {}

  record Kick(RunnerKey key, Disconnect mode, CompletableFuture<Boolean> reply)
      implements Command {}

  /** Ends every connection, completes the event stream, stops. */
  record Shutdown() implements Command {}

  private record HelloTimeout(long id) implements Command {}

  private static final class Conn {
    final Opened opened;
    Hello hello;
    int appliedSinceAck;

    Conn(Opened opened) {
      this.opened = opened;
    }

    boolean has(String capability) {
      return hello != null && hello.hasCapability(capability);
    }
  }

  private static final class Session {
    final SeqState seq;
    final Set<String> openTasks = new LinkedHashSet<>();

    /** Encoded size of each frame the SeqState holds above a gap, per task and seq. */
    final Map<String, Map<Long, Integer>> heldSizes = new HashMap<>();

    long heldBytes;
    Conn conn;
    Hello lastHello;

    Session(SeqState seq) {
      this.seq = seq;
    }
  }

  private final ProtocolConfig config;
  private final TimerScheduler<Command> timers;
  private final OrderedQueue<HubEvent> events;
  private final ConcurrentMap<RunnerKey, RunnerInfo> snapshot;
  private final HubJournal journal;
  private final Map<Long, Conn> conns = new HashMap<>();
  private final Map<RunnerKey, Session> sessions;
  private final Map<String, RunnerKey> taskOwner; // key: project + '\0' + task
  private ProtocolException journalFailure;

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
    this.journal = journal;
    this.sessions = new HashMap<>();
    restored
        .runners()
        .forEach(
            (key, r) -> {
              Session s = new Session(r.seq());
              s.openTasks.addAll(r.openTasks());
              sessions.put(key, s);
              publish(key, s); // a restored runner: known, not connected, with its open tasks
            });
    this.taskOwner = new HashMap<>(restored.taskOwner());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Opened.class, this::onOpened)
        .onMessage(Inbound.class, this::onInbound)
        .onMessage(Closed.class, this::onClosed)
        .onMessage(HelloTimeout.class, this::onHelloTimeout)
        .onMessage(Assign.class, this::onAssign)
        .onMessage(Cancel.class, this::onCancel)
        .onMessage(Kick.class, this::onKick)
        .onMessage(Shutdown.class, s -> onShutdown())
        .build();
  }

  private Behavior<Command> onOpened(Opened o) {
    conns.put(o.id(), new Conn(o));
    timers.startSingleTimer("hello-" + o.id(), new HelloTimeout(o.id()), config.helloTimeout());
    return this;
  }

  private Behavior<Command> onHelloTimeout(HelloTimeout t) {
    Conn c = conns.get(t.id());
    if (c != null && c.hello == null) {
      refuse(c, Code.E_PRO_009, "no hello within " + config.helloTimeout());
      c.opened.control().complete(new ServerSocket.Close(CloseCodes.POLICY_VIOLATION, "E-PRO-009"));
    }
    return this;
  }

  private Behavior<Command> onInbound(Inbound in) {
    Conn c = conns.get(in.id());
    if (c == null) {
      in.done().complete(Done.getInstance());
      return this;
    }
    List<CompletionStage<Done>> waits = new ArrayList<>();
    if (in.frame() instanceof FrameRejected r) {
      onRejected(c, r, waits);
    } else if (c.hello == null) {
      if (in.frame() instanceof Hello h) {
        onHello(c, h, waits);
      } else {
        getContext().getLog().warn("{}: {} before hello, dropped", c.opened.key(), in.frame());
      }
    } else {
      onFrame(c, (Frame) in.frame(), waits);
    }
    // Never wait for our own outbound here (the runner may be waiting for us to read before it
    // reads: a cross-wait through two full TCP buffers). Replies written here (acks, pongs, error
    // frames) are bounded by what the runner sends, which its replay bound limits.
    CompletableFuture.allOf(
            waits.stream()
                .map(CompletionStage::toCompletableFuture)
                .toArray(CompletableFuture[]::new))
        .whenComplete((d, e) -> in.done().complete(Done.getInstance()));
    return journalFailure == null ? this : halt();
  }

  private void onRejected(Conn c, FrameRejected r, List<CompletionStage<Done>> waits) {
    getContext().getLog().warn("{}: frame refused: {}", c.opened.key(), r.diagnostic());
    waits.add(events.offer(new HubEvent.Refused(c.opened.key(), r.diagnostic())));
    if (c.has(Capabilities.ERROR_FRAMES)) {
      send(c, new ErrorFrame(r.code().id(), r.diagnostic().message()));
    }
  }

  private void onHello(Conn c, Hello h, List<CompletionStage<Done>> waits) {
    RunnerKey key = c.opened.key();
    timers.cancel("hello-" + c.opened.id());
    if (!h.projectId().equals(c.opened.claims().projectId())) {
      Diagnostic d =
          Diagnostic.of(
              Code.E_PRO_008,
              "hello.project_id '"
                  + h.projectId()
                  + "' differs from the token's '"
                  + c.opened.claims().projectId()
                  + "'");
      getContext().getLog().warn("{}: {}", key, d);
      waits.add(events.offer(new HubEvent.Refused(key, d)));
      c.opened.control().complete(new ServerSocket.Close(CloseCodes.PROJECT_MISMATCH, "E-PRO-008"));
      return;
    }
    c.hello = h;
    Session s = sessions.computeIfAbsent(key, k -> new Session(SeqState.of(config)));
    if (s.conn != null && s.conn != c) {
      s.conn.opened.control().complete(new ServerSocket.Close(CloseCodes.REPLACED, "replaced"));
      waits.add(events.offer(new HubEvent.RunnerDown(key, "replaced by a new connection")));
      s.conn = null;
    }
    s.conn = c;
    s.lastHello = h;
    publish(key, s); // before the event: whoever sees RunnerUp must find the runner connected
    waits.add(events.offer(new HubEvent.RunnerUp(key, h)));
    getContext().getLog().info("{}: hello on connection {}", key, c.opened.id());
    if (c.has(Capabilities.ACK)) {
      send(c, new Ack(s.seq.takeAckMap()));
    }
    // The resume map proves what the runner holds: trim, then replay the rest in order (and
    // everything of an open task it does not list).
    s.seq.ack(h.resume());
    List<SequencedFrame> replay = s.seq.replayListFor(h.resume());
    replay.forEach(f -> send(c, f));
    HubTraffic.get(getContext().getSystem()).replayed(replay.size());
  }

  private void onFrame(Conn c, Frame f, List<CompletionStage<Done>> waits) {
    RunnerKey key = c.opened.key();
    Session s = sessions.get(key);
    if (s == null || s.conn != c) {
      return; // a replaced connection's late frame: the new one replays it
    }
    if (f instanceof Ping p) {
      send(c, new Pong(p.nonce()));
    } else if (f instanceof TaskProgress || f instanceof TaskReport) {
      SequencedFrame sf = (SequencedFrame) f;
      if (!s.openTasks.contains(sf.taskId()) && !s.seq.isFinished(sf.taskId())) {
        // Not placed on this runner: never applied, never held (a runner could otherwise fill
        // the hub with frames of tasks it invents). The connection stays: its own tasks go on.
        onRejected(c, notPlaced(key, sf), waits);
        return;
      }
      Receipt r = s.seq.receive(sf);
      if (!account(c, s, sf, r)) {
        return; // over the budget: the connection closes, the runner replays what was held
      }
      boolean reportSeen = f instanceof TaskReport;
      // What one frame applies (itself, and the held ones a filled gap releases) is stored in
      // one write: a task's entity keeps it all or none.
      List<HubJournal.Entry> batch =
          r.applied().stream()
              .map(applied -> new HubJournal.Entry(key, Direction.APPLIED, applied))
              .toList();
      if (!batch.isEmpty() && !recordAll(batch)) {
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
        send(c, new Ack(s.seq.takeAckMap()));
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

  /**
   * Keeps the bytes of held frames per runner under {@link ProtocolConfig#heldBytesBudget()}: a
   * held frame adds its encoded size, an applied one that was held gives it back, a finished task
   * gives back whatever it still held. Past the budget every held frame is dropped and the
   * connection closes (1008, E-PRO-013); nothing applied is lost, since held frames were neither
   * applied nor acknowledged and the runner replays them in order. False when it closed the
   * connection.
   */
  private boolean account(Conn c, Session s, SequencedFrame f, Receipt r) {
    if (r.status() == Receipt.Status.HELD) {
      int size = CODEC.encode(f).length; // only out-of-order frames pay for this
      s.heldSizes.computeIfAbsent(f.taskId(), k -> new HashMap<>()).put(f.seq(), size);
      s.heldBytes += size;
    }
    Map<Long, Integer> held = s.heldSizes.get(f.taskId());
    if (held != null) {
      for (SequencedFrame applied : r.applied()) {
        Integer size = held.remove(applied.seq());
        s.heldBytes -= size == null ? 0 : size;
      }
      if (held.isEmpty() || s.seq.isFinished(f.taskId())) {
        held.values().forEach(size -> s.heldBytes -= size);
        s.heldSizes.remove(f.taskId());
      }
    }
    HubTraffic.get(getContext().getSystem()).held(c.opened.key(), s.heldBytes); // the gauge
    if (s.heldBytes <= config.heldBytesBudget()) {
      return true;
    }
    refuse(
        c,
        Code.E_PRO_013,
        "held out-of-order frames reached "
            + s.heldBytes
            + " bytes, over the budget of "
            + config.heldBytesBudget());
    s.seq.dropHeld();
    s.heldSizes.clear();
    s.heldBytes = 0;
    HubTraffic.get(getContext().getSystem()).held(c.opened.key(), 0);
    c.opened.control().complete(new ServerSocket.Close(CloseCodes.POLICY_VIOLATION, "E-PRO-013"));
    return false;
  }

  private FrameRejected notPlaced(RunnerKey key, SequencedFrame f) {
    RunnerKey owner = taskOwner.get(HubRestore.owned(key.projectId(), f.taskId()));
    return new FrameRejected(
        Code.E_PRO_011,
        "runner '"
            + key.runnerId()
            + "' sent "
            + f.type()
            + " seq "
            + f.seq()
            + " for task '"
            + f.taskId()
            + "', which "
            + (owner == null
                ? "is not an open task of this project"
                : "is placed on runner '" + owner.runnerId() + "'")
            + "; nothing of it was applied");
  }

  private Behavior<Command> onClosed(Closed closed) {
    Conn c = conns.remove(closed.id());
    timers.cancel("hello-" + closed.id());
    if (c == null) {
      return this;
    }
    c.opened.out().complete();
    c.opened.control().complete(new ServerSocket.Drop());
    Session s = sessions.get(c.opened.key());
    if (s != null && s.conn == c) {
      s.conn = null;
      publish(c.opened.key(), s);
      events.offer(new HubEvent.RunnerDown(c.opened.key(), closed.reason()));
    }
    return this;
  }

  private Behavior<Command> onAssign(Assign a) {
    Session s = sessions.computeIfAbsent(a.key(), k -> new Session(SeqState.of(config)));
    try {
      // Refused before it takes a seq: the runner could never accept it.
      Message message = Wire.cappedNext(s.seq, a.assign(), config.frameCapBytes());
      TaskAssign numbered = s.seq.emit(a.assign());
      if (!record(a.key(), Direction.SENT, numbered)) {
        a.reply().completeExceptionally(journalFailure);
        return halt();
      }
      s.openTasks.add(numbered.taskId());
      taskOwner.put(HubRestore.owned(a.key().projectId(), numbered.taskId()), a.key());
      sendIfUp(s, message);
      publish(a.key(), s);
      a.reply().complete(numbered);
    } catch (ProtocolException e) {
      a.reply().completeExceptionally(e);
    }
    return this;
  }

  private Behavior<Command> onCancel(Cancel c) {
    RunnerKey key = taskOwner.get(HubRestore.owned(c.projectId(), c.taskId()));
    Session s = key == null ? null : sessions.get(key);
    if (s == null || s.seq.isFinished(c.taskId())) {
      c.reply().complete(Optional.empty()); // unknown or finished: a cancel changes nothing
      return this;
    }
    try {
      TaskCancel cancel = new TaskCancel(c.taskId(), c.reason());
      Message message = Wire.cappedNext(s.seq, cancel, config.frameCapBytes());
      TaskCancel numbered = s.seq.emit(cancel);
      if (!record(key, Direction.SENT, numbered)) {
        c.reply().completeExceptionally(journalFailure);
        return halt();
      }
      sendIfUp(s, message);
      c.reply().complete(Optional.of(numbered));
    } catch (ProtocolException e) {
      c.reply().completeExceptionally(e);
    }
    return this;
  }

  private Behavior<Command> onKick(Kick k) {
    Session s = sessions.get(k.key());
    if (s == null || s.conn == null) {
      k.reply().complete(false);
      return this;
    }
    Control how =
        switch (k.mode()) {
          case CLOSE -> new ServerSocket.Close(CloseCodes.NORMAL, "closed by the hub");
          case DROP -> new ServerSocket.Drop();
          case ABORT -> new ServerSocket.Abort();
        };
    s.conn.opened.control().complete(how);
    k.reply().complete(true);
    return this;
  }

  private Behavior<Command> onShutdown() {
    for (Conn c : conns.values()) {
      c.opened.control().complete(new ServerSocket.Close(CloseCodes.NORMAL, "hub shutting down"));
    }
    events.complete();
    return Behaviors.stopped();
  }

  /** Journals one entry before it has any effect; false (and the failure kept) when it cannot. */
  private boolean record(RunnerKey key, Direction direction, SequencedFrame frame) {
    return recordAll(List.of(new HubJournal.Entry(key, direction, frame)));
  }

  /** Journals entries that arrived together, in one write where the journal can. */
  private boolean recordAll(List<HubJournal.Entry> entries) {
    try {
      journal.appendAll(entries);
      return true;
    } catch (ProtocolException e) {
      journalFailure = e;
      return false;
    } catch (RuntimeException e) {
      journalFailure =
          new ProtocolException(
              Diagnostic.of(Code.E_PRO_010, "the hub journal failed: " + e.getMessage()), e);
      return false;
    }
  }

  /**
   * The journal failed: stop rather than acknowledge or send what could not be kept. Runners keep
   * their frames and resume against the restarted hub, which restores from the same journal.
   */
  private Behavior<Command> halt() {
    getContext().getLog().error("hub stops: {}", journalFailure.diagnostic());
    for (Conn c : conns.values()) {
      c.opened.control().complete(new ServerSocket.Close(CloseCodes.INTERNAL_ERROR, "E-PRO-010"));
    }
    events.fail(journalFailure);
    return Behaviors.stopped();
  }

  private void sendIfUp(Session s, Message encoded) {
    HubTraffic.get(getContext().getSystem()).sent(); // sent now, or replayed at the next hello
    // While the runner is away the frame waits in the replay buffer; hello.resume brings it.
    if (s.conn != null && s.conn.hello != null) {
      s.conn.opened.out().offer(encoded);
    }
  }

  private void send(Conn c, Frame f) {
    c.opened.out().offer(Wire.text(f));
  }

  private void refuse(Conn c, Code code, String message) {
    Diagnostic d = Diagnostic.of(code, message);
    getContext().getLog().warn("{}: {}", c.opened.key(), d);
    events.offer(new HubEvent.Refused(c.opened.key(), d));
  }

  private void publish(RunnerKey key, Session s) {
    Hello h = s.lastHello;
    snapshot.put(
        key,
        new RunnerInfo(
            key,
            s.conn != null,
            h == null ? "" : h.runnerVersion(),
            h == null ? List.of() : h.capabilities(),
            s.openTasks));
  }
}
