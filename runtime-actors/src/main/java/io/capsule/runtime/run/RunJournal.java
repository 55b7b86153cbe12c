package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.runtime.core.TraceFile;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.hub.ProtocolSession;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * Where a run says what happened: its trace ({@code trace.jsonl}, written on the blocking
 * dispatcher), its progress and its report (to its {@link ProtocolSession}, which tells the
 * listener and the hub). Confined to the run's actor thread. The trace writer is closed only by the
 * run's cleanup ({@link RunEnd#cleanUp}).
 */
final class RunJournal {

  private final String taskId;
  private final TraceFile trace;
  private final ActorRef<ProtocolSession.Command> session;

  RunJournal(String taskId, TraceFile trace, ActorRef<ProtocolSession.Command> session) {
    this.taskId = taskId;
    this.trace = trace;
    this.session = session;
  }

  String taskId() {
    return taskId;
  }

  TraceFile writer() {
    return trace;
  }

  void trace(TraceRecord record) {
    trace.write(record);
  }

  void trace(List<TraceRecord> records) {
    trace.writeAll(records);
  }

  /** A {@code harness_note} line: something about the harness worth keeping, not an event. */
  void harnessNote(String note) {
    trace.write(TraceRecord.of("harness_note").with("note", note));
  }

  void progress(RunEvent e) {
    session.tell(new ProtocolSession.Progress(e));
  }

  /** Several events in order (a parsed batch's): one message to the session, not one each. */
  void progress(List<RunEvent> events) {
    if (!events.isEmpty()) {
      session.tell(new ProtocolSession.ProgressAll(events));
    }
  }

  /** The run entered {@code phase}: reported as progress. */
  void phase(RunPhase phase) {
    progress(new RunEvent.StateChanged(taskId, phase));
  }

  /** Sends the run's one report; the session answers {@code replyTo} when it is out. */
  void report(RunOutcome outcome, ActorRef<ProtocolSession.Reported> replyTo) {
    session.tell(new ProtocolSession.Finish(outcome, replyTo));
  }

  /** A warning: traced ({@code harness_warning}) and reported as progress; the run goes on. */
  void warn(Code code, String message) {
    trace.write(TraceRecord.of("harness_warning").with("code", code.id()).with("message", message));
    progress(new RunEvent.Warning(taskId, code.id(), message));
  }
}
