package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.hub.placement.Attempt;
import io.capsule.hub.runner.BrainSession.Conn;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.ErrorFrame;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import io.capsule.protocol.ws.CloseCodes;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;

/**
 * The brain's rules for one runner's frames, in the order the protocol applies them: hello and
 * resume, ownership (progress and reports only for a task placed on the runner), the held-frame
 * budget, apply-then-ack. Each frame changes the brain's state at once; what others see of it (its
 * events, the ack that covers it, a pong, an error frame) goes to {@link BrainJournal} to happen
 * once everything queued before it in the runner's lane is stored. Part of {@link HubCore}: its
 * state, touched by the brain's actor only.
 */
final class RunnerFrames {
  private final ProtocolConfig config;
  private final Logger log;
  private final EventBatches events;
  private final ConcurrentMap<RunnerKey, RunnerInfo> snapshot;
  private final BrainJournal journal;
  private final Map<RunnerKey, BrainSession> sessions;
  private final Map<String, RunnerKey> taskOwner;
  private final HubTraffic traffic;

  RunnerFrames(
      ProtocolConfig config,
      Logger log,
      EventBatches events,
      ConcurrentMap<RunnerKey, RunnerInfo> snapshot,
      BrainJournal journal,
      Map<RunnerKey, BrainSession> sessions,
      Map<String, RunnerKey> taskOwner,
      HubTraffic traffic) {
    this.config = config;
    this.log = log;
    this.events = events;
    this.snapshot = snapshot;
    this.journal = journal;
    this.sessions = sessions;
    this.taskOwner = taskOwner;
    this.traffic = traffic;
  }

  void onRejected(Conn c, FrameRejected r) {
    log.warn("{}: frame refused: {}", c.opened.key(), r.diagnostic().render());
    journal.then(
        c.key(),
        List.of(),
        0,
        () -> {
          events.offer(new HubEvent.Refused(c.opened.key(), r.diagnostic()));
          if (c.has(Capabilities.ERROR_FRAMES)) {
            c.send(new ErrorFrame(r.code().id(), r.diagnostic().message()));
          }
        });
  }

  void onHello(Conn c, Hello h) {
    RunnerKey key = c.opened.key();
    if (!h.projectId().equals(c.opened.tokenProject())) {
      Diagnostic d =
          Diagnostic.of(
              Code.E_PRO_008,
              "hello.project_id '"
                  + h.projectId()
                  + "' differs from the token's '"
                  + c.opened.tokenProject()
                  + "'");
      log.warn("{}: {}", key, d);
      events.offer(new HubEvent.Refused(key, d));
      c.end(CloseCodes.PROJECT_MISMATCH, "E-PRO-008");
      return;
    }
    BrainSession s = sessions.computeIfAbsent(key, k -> new BrainSession(SeqState.of(config)));
    boolean replaced = s.attach(c, h) != null;
    log.info("{}: hello on connection {}", key, c.opened.id());
    BrainSession.Resume resume = s.resume(c, h); // decided now, from what is queued before it
    traffic.replayed(resume.replay().size());
    RunnerInfo info = s.info(key);
    journal.then(
        key,
        List.of(),
        0,
        () -> {
          if (replaced) {
            events.offer(new HubEvent.RunnerDown(key, "replaced by a new connection"));
          }
          snapshot.put(key, info); // before the event: whoever sees RunnerUp finds it connected
          events.offer(new HubEvent.RunnerUp(key, h));
          resume.sendTo(c);
        });
  }

  /**
   * One frame of a runner's connection, decoded from {@code text} (the store keeps that text for an
   * applied frame rather than encoding it again).
   */
  void onFrame(Conn c, Frame f, String text) {
    long bytes = text.length();
    RunnerKey key = c.opened.key();
    BrainSession s = sessions.get(key);
    if (s == null || s.conn != c) {
      return; // a replaced connection's late frame: the new one replays it
    }
    if (f instanceof Ping p) {
      journal.then(key, List.of(), 0, () -> c.send(new Pong(p.nonce())));
    } else if (f instanceof TaskProgress || f instanceof TaskReport) {
      SequencedFrame sf = (SequencedFrame) f;
      if (!s.openTasks.contains(sf.taskId()) && !s.seq.isFinished(sf.taskId())) {
        // Not placed on this runner: never applied, never held (a runner could otherwise fill
        // the hub with frames of tasks it invents). The connection stays: its own tasks go on.
        onRejected(
            c,
            BrainSession.notPlaced(
                key, sf, taskOwner.get(HubRestore.owned(key.projectId(), sf.taskId()))));
        return;
      }
      Receipt r = s.seq.receive(sf);
      Optional<String> over = s.overBudget(sf, r, config.heldBytesBudget());
      traffic.held(key, s.heldBytes()); // the gauge
      if (over.isPresent()) {
        // Over the budget: the connection closes (after what is queued before), and the runner
        // replays what was held.
        journal.then(key, List.of(), 0, () -> endOverBudget(c, over.get()));
        return;
      }
      onApplied(c, s, r.applied(), f instanceof TaskReport, bytes, sf, text);
      if (r.isGap()) {
        log.debug("{}: {} seq {} waits for {}", key, sf.taskId(), sf.seq(), r.expected());
      }
    } else if (f instanceof ErrorFrame e) {
      log.warn("{}: runner refused a frame: {} {}", key, e.code(), e.message());
    } else if (f instanceof Pong || f instanceof Hello) {
      // Pong: the heartbeat did its job by arriving. A second hello changes nothing.
    } else {
      onRejected(c, new FrameRejected(Code.E_PRO_002, "a runner does not send '" + f.type() + "'"));
    }
  }

  /**
   * What one frame applied (itself, and the held ones a filled gap releases) is stored in one
   * write, so a task's entity keeps it all or none; its events, and the ack that covers it, follow
   * once it is stored.
   */
  private void onApplied(
      Conn c,
      BrainSession s,
      List<SequencedFrame> applied,
      boolean reportSeen,
      long bytes,
      SequencedFrame received,
      String text) {
    RunnerKey key = c.key();
    RunnerInfo info = null;
    for (SequencedFrame a : applied) {
      c.appliedSinceAck++;
      if (a instanceof TaskReport rep) {
        s.openTasks.remove(rep.taskId());
        taskOwner.remove(HubRestore.owned(key.projectId(), rep.taskId()));
        info = s.info(key);
      }
    }
    Ack ack = null;
    if (c.has(Capabilities.ACK) && (reportSeen || c.appliedSinceAck >= config.ackEvery())) {
      c.appliedSinceAck = 0;
      ack = new Ack(s.seq.takeAckMap()); // true once what is queued up to here is stored
    }
    if (applied.isEmpty() && ack == null) {
      return; // held above a gap: nothing happened yet
    }
    RunnerInfo after = info;
    Ack ackNow = ack;
    journal.then(
        key,
        applied.stream()
            .map(a -> new HubJournal.Entry(key, Direction.APPLIED, a, a == received ? text : null))
            .toList(),
        bytes,
        () -> {
          if (after != null) {
            snapshot.put(key, after);
          }
          for (SequencedFrame a : applied) { // the journal keeps wire ids, events task ids
            events.offer(
                a instanceof TaskReport rep
                    ? new HubEvent.Report(key, Attempt.asTask(rep))
                    : new HubEvent.Progress(key, Attempt.asTask((TaskProgress) a)));
          }
          if (ackNow != null) {
            c.send(ackNow);
          }
        });
  }

  private void endOverBudget(Conn c, String why) {
    refuse(c, Code.E_PRO_013, why);
    c.end(CloseCodes.POLICY_VIOLATION, "E-PRO-013");
  }

  void refuse(Conn c, Code code, String message) {
    Diagnostic d = Diagnostic.of(code, message);
    log.warn("{}: {}", c.key(), d);
    events.offer(new HubEvent.Refused(c.key(), d));
  }
}
