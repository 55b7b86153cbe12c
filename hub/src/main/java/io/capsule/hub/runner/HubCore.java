package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.runner.ServerSocket.Control;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubJournal.Direction;
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
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.seq.SeqState;
import io.capsule.protocol.token.TokenClaims;
import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.Disconnect;
import io.capsule.protocol.ws.OrderedQueue;
import io.capsule.protocol.ws.Wire;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * The hub's state: one {@link RunnerSession} per runner (it outlives connections), the connection
 * each runner is on, which runner owns which task. All socket callbacks arrive here as messages;
 * the streams wait on the futures in them, which is how a slow store, a slow event consumer or a
 * slow runner back-pressures the socket instead of growing a buffer ({@link Inflow}).
 *
 * <p>Durability without blocking: every frame the hub sends and every runner frame it applies is
 * written to the {@link HubJournal} asynchronously, one write per task in flight ({@link
 * WriteQueue}: what arrives meanwhile leaves as the next batch), and only its completion sends the
 * frame, publishes the event or lets an {@code ack} cover it ({@link DurableAcks}). Meanwhile the
 * actor serves every other connection, so writes of many runners reach the store together. When the
 * journal fails, the hub stops: connections close with 1011 and the event stream fails with {@code
 * E-PRO-010}. A hub starts from what its journal recorded ({@link HubRestore}).
 */
final class HubCore extends AbstractBehavior<HubCore.Command> {

  /**
   * 1 MiB of applied, not yet published frames per connection (one frame at the spec's cap, or
   * ~2,000 typical progress frames: far more than a store round trip needs to stay busy).
   */
  static final int UNSETTLED_BYTES_PER_CONNECTION = 1 << 20;

  /** 32 MiB over the hub: what the store may lag behind all runners before every socket waits. */
  static final int UNSETTLED_BYTES_TOTAL = 32 << 20;

  /** 256 frames per write: a few hundred KiB at most per {@code persistAll} of typical frames. */
  static final int MAX_BATCH = 256;

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

  /**
   * Ends every connection, finishes the writes in flight (publishing what they kept), completes the
   * event stream, stops; {@code done} completes once every event is in the stream.
   */
  record Shutdown(CompletableFuture<Done> done) implements Command {}

  private record HelloTimeout(long id) implements Command {}

  /** The runner's dead-after ran out since its connection ended. */
  private record Gone(RunnerKey key) implements Command {}

  /** A write of one task finished; {@code failure} is null when the store kept it. */
  record Written(String task, List<JournalWrite> batch, Throwable failure) implements Command {}

  /** The events of kept frames entered the event stream: bytes per connection to give back. */
  private record Settled(Map<Long, Integer> bytes) implements Command {}

  private final ProtocolConfig config;
  private final TimerScheduler<Command> timers;
  private final OrderedQueue<HubEvent> events;
  private final CompletableFuture<Done> outcome; // how the event stream ends: see HubDrain
  private final ConcurrentMap<RunnerKey, RunnerInfo> snapshot;
  private final HubJournal journal;
  private final Map<Long, RunnerConn> conns = new HashMap<>();
  private final Map<RunnerKey, RunnerSession> sessions = new HashMap<>();
  private final Map<String, RunnerKey> taskOwner; // key: HubRestore.owned(project, task)
  private final WriteQueue<JournalWrite> writes = new WriteQueue<>(MAX_BATCH);
  private final Inflow inflow = new Inflow(UNSETTLED_BYTES_PER_CONNECTION, UNSETTLED_BYTES_TOTAL);
  private int writing; // journal writes in flight

  static Behavior<Command> create(
      ProtocolConfig config,
      OrderedQueue<HubEvent> events,
      CompletableFuture<Done> outcome,
      ConcurrentMap<RunnerKey, RunnerInfo> snapshot,
      HubJournal journal,
      HubRestore restored) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new HubCore(
                        ctx, timers, config, events, outcome, snapshot, journal, restored)));
  }

  private HubCore(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      ProtocolConfig config,
      OrderedQueue<HubEvent> events,
      CompletableFuture<Done> outcome,
      ConcurrentMap<RunnerKey, RunnerInfo> snapshot,
      HubJournal journal,
      HubRestore restored) {
    super(ctx);
    this.outcome = outcome;
    this.timers = timers;
    this.config = config;
    this.events = events;
    this.snapshot = snapshot;
    this.journal = journal;
    restored
        .runners()
        .forEach(
            (key, r) -> {
              RunnerSession s = new RunnerSession(r.seq());
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
        .onMessage(Written.class, this::onWritten)
        .onMessage(Settled.class, this::onSettled)
        .onMessage(Closed.class, this::onClosed)
        .onMessage(HelloTimeout.class, this::onHelloTimeout)
        .onMessage(Gone.class, this::onGone)
        .onMessage(Assign.class, this::onAssign)
        .onMessage(Cancel.class, this::onCancel)
        .onMessage(Kick.class, this::onKick)
        .onMessage(Shutdown.class, this::onShutdown)
        .build();
  }

  private Behavior<Command> onOpened(Opened o) {
    conns.put(o.id(), new RunnerConn(o));
    timers.startSingleTimer("hello-" + o.id(), new HelloTimeout(o.id()), config.helloTimeout());
    return this;
  }

  private Behavior<Command> onHelloTimeout(HelloTimeout t) {
    RunnerConn c = conns.get(t.id());
    if (c != null && c.hello == null) {
      refuse(c, Code.E_PRO_009, "no hello within " + config.helloTimeout());
      close(c, CloseCodes.POLICY_VIOLATION, "E-PRO-009");
    }
    return this;
  }

  private Behavior<Command> onInbound(Inbound in) {
    RunnerConn c = conns.get(in.id());
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
    inflow.admit(
        in.id(),
        in.done(),
        CompletableFuture.allOf(
            waits.stream()
                .map(CompletionStage::toCompletableFuture)
                .toArray(CompletableFuture[]::new)));
    return this;
  }

  private void onRejected(RunnerConn c, FrameRejected r, List<CompletionStage<Done>> waits) {
    getContext().getLog().warn("{}: frame refused: {}", c.opened.key(), r.diagnostic());
    waits.add(events.offer(new HubEvent.Refused(c.opened.key(), r.diagnostic())));
    if (c.has(Capabilities.ERROR_FRAMES)) {
      send(c, new ErrorFrame(r.code().id(), r.diagnostic().message()));
    }
  }

  private void onHello(RunnerConn c, Hello h, List<CompletionStage<Done>> waits) {
    RunnerKey key = c.opened.key();
    timers.cancel("hello-" + c.id());
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
      close(c, CloseCodes.PROJECT_MISMATCH, "E-PRO-008");
      return;
    }
    c.hello = h;
    RunnerSession s = session(key);
    if (s.conn != null && s.conn != c) {
      close(s.conn, CloseCodes.REPLACED, "replaced");
      waits.add(events.offer(new HubEvent.RunnerDown(key, "replaced by a new connection")));
    }
    s.conn = c;
    s.lastHello = h;
    timers.cancel(key); // back within dead-after: its tasks stay
    publish(key, s); // before the event: whoever sees RunnerUp must find the runner connected
    waits.add(events.offer(new HubEvent.RunnerUp(key, h)));
    getContext().getLog().info("{}: hello on connection {}", key, c.id());
    c.resumePending = true;
    resumeWhenKept(s);
  }

  /** The hello's ack and replay, once no frame numbered for the runner is still being written. */
  private void resumeWhenKept(RunnerSession s) {
    RunnerConn c = s.conn;
    if (c == null || !c.resumePending || s.sentInFlight > 0) {
      return;
    }
    c.resumePending = false;
    if (c.has(Capabilities.ACK)) {
      sendAck(s, c);
    }
    // The resume map proves what the runner holds: trim, then replay the rest in order (and
    // everything of an open task it does not list).
    s.seq.ack(c.hello.resume());
    for (SequencedFrame f : s.seq.replayListFor(c.hello.resume())) {
      send(c, f);
    }
  }

  private void onFrame(RunnerConn c, Frame f, List<CompletionStage<Done>> waits) {
    RunnerKey key = c.opened.key();
    RunnerSession s = sessions.get(key);
    if (s == null || s.conn != c) {
      return; // a replaced connection's late frame: the new one replays it
    }
    if (f instanceof Ping p) {
      send(c, new Pong(p.nonce()));
    } else if (f instanceof TaskProgress || f instanceof TaskReport) {
      onSequenced(c, s, (SequencedFrame) f, waits);
    } else if (f instanceof ErrorFrame e) {
      getContext().getLog().warn("{}: runner refused a frame: {} {}", key, e.code(), e.message());
    } else if (!(f instanceof Pong || f instanceof Hello)) {
      // Pong: the heartbeat did its job by arriving. A second hello changes nothing.
      onRejected(
          c, new FrameRejected(Code.E_PRO_002, "a runner does not send '" + f.type() + "'"), waits);
    }
  }

  private void onSequenced(
      RunnerConn c, RunnerSession s, SequencedFrame sf, List<CompletionStage<Done>> waits) {
    RunnerKey key = c.opened.key();
    FrameIntake.Outcome outcome = FrameIntake.take(s, key, sf, taskOwner, config.heldBytesBudget());
    if (outcome instanceof FrameIntake.NotPlaced n) {
      onRejected(c, n.why(), waits); // the connection stays: its own tasks go on
    } else if (outcome instanceof FrameIntake.OverBudget o) {
      refuse(
          c,
          Code.E_PRO_013,
          "held out-of-order frames reached "
              + o.heldBytes()
              + " bytes, over the budget of "
              + config.heldBytesBudget());
      close(c, CloseCodes.POLICY_VIOLATION, "E-PRO-013");
    } else if (outcome instanceof FrameIntake.Nothing n) {
      ackIfDue(s, n.ackAgain());
    } else if (outcome instanceof FrameIntake.Apply a) {
      List<JournalWrite> group = new ArrayList<>();
      for (SequencedFrame applied : a.frames()) {
        HubJournal.Entry entry = new HubJournal.Entry(key, Direction.APPLIED, applied);
        int bytes = entry.text().length(); // chars: close enough to bytes for a memory bound
        group.add(new JournalWrite.Applied(c.id(), entry, bytes));
        inflow.add(c.id(), bytes);
      }
      s.acks.sent(sf.taskId(), group.size(), a.frames().get(0).seq() - 1);
      write(HubRestore.owned(key.projectId(), sf.taskId()), group);
    }
  }

  private void write(String task, List<JournalWrite> group) {
    start(task, writes.offer(task, group));
  }

  private void start(String task, List<JournalWrite> batch) {
    if (batch.isEmpty()) {
      return;
    }
    writing++;
    getContext()
        .pipeToSelf(
            journal.appendAllAsync(batch.stream().map(JournalWrite::entry).toList()),
            (ok, failure) -> new Written(task, batch, failure));
  }

  private Behavior<Command> onWritten(Written w) {
    writing--;
    if (w.failure() != null) {
      ProtocolException e = storeFailure(w.failure());
      getContext().getLog().error("hub stops: {}", e.diagnostic());
      HubDrain.lose(w.batch(), e);
      HubDrain.lose(writes.drain(), e);
      for (RunnerConn c : conns.values()) {
        close(c, CloseCodes.INTERNAL_ERROR, "E-PRO-010");
      }
      return HubDrain.start(events, outcome, conns, List.of(), writing, e);
    }
    applyKept(w.batch());
    start(w.task(), writes.done(w.task()));
    return this;
  }

  /** A write is kept: send what the hub numbered, publish what runners sent, give back bytes. */
  private void applyKept(List<JournalWrite> batch) {
    Map<Long, Integer> bytes = new HashMap<>();
    List<CompletableFuture<Done>> published = new ArrayList<>();
    for (JournalWrite jw : batch) {
      RunnerKey key = jw.entry().runner();
      RunnerSession s = session(key);
      if (jw instanceof JournalWrite.Applied a) {
        bytes.merge(a.conn(), a.bytes(), Integer::sum);
        published.add(kept(key, s, a.entry().frame()).toCompletableFuture());
      } else if (jw instanceof JournalWrite.Sent sent) {
        s.sentInFlight--;
        if (s.conn != null && s.conn.live()) {
          s.conn.opened.out().offer(sent.encoded());
        }
        sent.kept().run();
        resumeWhenKept(s);
      }
    }
    if (!bytes.isEmpty()) {
      getContext()
          .pipeToSelf(
              CompletableFuture.allOf(published.toArray(CompletableFuture[]::new)),
              (ok, e) -> new Settled(bytes));
    }
  }

  /** An applied frame is kept: publish its event, and ack when due. */
  private CompletionStage<Done> kept(RunnerKey key, RunnerSession s, SequencedFrame f) {
    boolean report = f instanceof TaskReport;
    s.acks.kept(f.taskId(), 1, f.seq(), report);
    if (s.conn != null) {
      s.conn.appliedSinceAck++;
    }
    CompletionStage<Done> offered;
    if (f instanceof TaskReport rep) {
      s.openTasks.remove(rep.taskId());
      taskOwner.remove(HubRestore.owned(key.projectId(), rep.taskId()));
      publish(key, s);
      offered = events.offer(new HubEvent.Report(key, rep));
    } else {
      offered = events.offer(new HubEvent.Progress(key, (TaskProgress) f));
    }
    ackIfDue(s, report);
    return offered;
  }

  private void ackIfDue(RunnerSession s, boolean now) {
    RunnerConn c = s.conn;
    if (c != null
        && c.live()
        && c.has(Capabilities.ACK)
        && (now || c.appliedSinceAck >= config.ackEvery() || s.acks.inFlight() == 0)) {
      sendAck(s, c);
    }
  }

  private void sendAck(RunnerSession s, RunnerConn c) {
    c.appliedSinceAck = 0;
    send(c, new Ack(s.acks.body(s.seq.takeAckMap())));
  }

  private Behavior<Command> onSettled(Settled settled) {
    settled.bytes().forEach(inflow::settle);
    return this;
  }

  private Behavior<Command> onClosed(Closed closed) {
    RunnerConn c = conns.remove(closed.id());
    timers.cancel("hello-" + closed.id());
    inflow.closed(closed.id());
    if (c == null) {
      return this;
    }
    c.opened.out().complete();
    c.opened.control().complete(new ServerSocket.Drop());
    RunnerSession s = sessions.get(c.opened.key());
    if (s != null && s.conn == c) {
      s.conn = null;
      publish(c.opened.key(), s);
      events.offer(new HubEvent.RunnerDown(c.opened.key(), closed.reason()));
      timers.startSingleTimer(c.opened.key(), new Gone(c.opened.key()), config.deadAfter());
    }
    return this;
  }

  private Behavior<Command> onGone(Gone g) {
    RunnerSession s = sessions.get(g.key());
    if (s != null && s.conn == null && !s.openTasks.isEmpty()) {
      getContext().getLog().info("{}: away past dead-after with {}", g.key(), s.openTasks);
      events.offer(new HubEvent.RunnerGone(g.key(), s.openTasks));
    }
    return this;
  }

  private Behavior<Command> onAssign(Assign a) {
    RunnerSession s = session(a.key());
    try {
      // Refused before it takes a seq: the runner could never accept it.
      Message message = Wire.cappedNext(s.seq, a.assign(), config.frameCapBytes());
      TaskAssign numbered = s.seq.emit(a.assign());
      s.openTasks.add(numbered.taskId());
      RunnerKey before =
          taskOwner.put(HubRestore.owned(a.key().projectId(), numbered.taskId()), a.key());
      if (before != null && !before.equals(a.key()) && sessions.containsKey(before)) {
        // Placed again: the old runner no longer owns it (its late frames are refused) and is
        // never re-sent its assign. What it applied stays in the journal: the re-run keeps it.
        RunnerSession old = sessions.get(before);
        old.openTasks.remove(numbered.taskId());
        old.seq.release(numbered.taskId());
        publish(before, old);
      }
      sendWhenKept(
          a.key(),
          s,
          numbered,
          message,
          () -> {
            publish(a.key(), s);
            a.reply().complete(numbered);
          },
          a.reply()::completeExceptionally);
    } catch (ProtocolException e) {
      a.reply().completeExceptionally(e);
    }
    return this;
  }

  private Behavior<Command> onCancel(Cancel c) {
    RunnerKey key = taskOwner.get(HubRestore.owned(c.projectId(), c.taskId()));
    RunnerSession s = key == null ? null : sessions.get(key);
    if (s == null || s.seq.isFinished(c.taskId())) {
      c.reply().complete(Optional.empty()); // unknown or finished: a cancel changes nothing
      return this;
    }
    try {
      TaskCancel cancel = new TaskCancel(c.taskId(), c.reason());
      Message message = Wire.cappedNext(s.seq, cancel, config.frameCapBytes());
      TaskCancel numbered = s.seq.emit(cancel);
      sendWhenKept(
          key,
          s,
          numbered,
          message,
          () -> c.reply().complete(Optional.of(numbered)),
          c.reply()::completeExceptionally);
    } catch (ProtocolException e) {
      c.reply().completeExceptionally(e);
    }
    return this;
  }

  /** Journals a frame numbered for a runner; it goes out (or waits for a resume) once kept. */
  private void sendWhenKept(
      RunnerKey key,
      RunnerSession s,
      SequencedFrame numbered,
      Message message,
      Runnable kept,
      java.util.function.Consumer<Throwable> lost) {
    s.sentInFlight++;
    HubJournal.Entry entry = new HubJournal.Entry(key, Direction.SENT, numbered);
    write(
        HubRestore.owned(key.projectId(), numbered.taskId()),
        List.of(new JournalWrite.Sent(entry, message, kept, lost)));
  }

  private Behavior<Command> onKick(Kick k) {
    RunnerSession s = sessions.get(k.key());
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

  private Behavior<Command> onShutdown(Shutdown s) {
    for (RunnerConn c : conns.values()) {
      close(c, CloseCodes.NORMAL, "hub shutting down");
    }
    HubDrain.lose(writes.drain(), new IllegalStateException("the hub stopped"));
    return HubDrain.start(events, outcome, conns, List.of(s.done()), writing, null);
  }

  static ProtocolException storeFailure(Throwable failure) {
    return failure instanceof ProtocolException p
        ? p
        : new ProtocolException(
            Diagnostic.of(Code.E_PRO_010, "the hub journal failed: " + failure.getMessage()),
            failure);
  }

  private RunnerSession session(RunnerKey key) {
    return sessions.computeIfAbsent(key, k -> new RunnerSession(SeqState.of(config)));
  }

  private void send(RunnerConn c, Frame f) {
    c.opened.out().offer(Wire.text(f));
  }

  private static void close(RunnerConn c, int code, String reason) {
    c.opened.control().complete(new ServerSocket.Close(code, reason));
  }

  private void refuse(RunnerConn c, Code code, String message) {
    Diagnostic d = Diagnostic.of(code, message);
    getContext().getLog().warn("{}: {}", c.opened.key(), d);
    events.offer(new HubEvent.Refused(c.opened.key(), d));
  }

  private void publish(RunnerKey key, RunnerSession s) {
    snapshot.put(key, s.info(key));
  }
}
