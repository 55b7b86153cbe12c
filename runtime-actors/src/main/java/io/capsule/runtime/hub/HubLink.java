package io.capsule.runtime.hub;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.ws.RunnerClient;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunEventJson;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.metrics.RuntimeMetrics;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * One hub connection seen from the runtime (docs/runner-protocol.md). The protocol module's {@link
 * RunnerClient} owns the socket and everything about it: hello with the resume map, heartbeats,
 * reconnecting with back-off, per-task seq numbers, the replay buffer and acks, and delivering the
 * hub's frames once each and in order. This actor does the runtime's part: it starts a run for each
 * {@code task.assign} (at most {@code maxRuns} at once; later ones wait in arrival order), reports
 * an assignment naming no capsule of this runner at once as {@code blocked} with {@code E-RUN-006},
 * routes {@code task.cancel} to the task's session, and sends each run's progress and its one
 * report through the client, each made to fit the hub's frame cap ({@link ProgressFit}).
 *
 * <p>Reconnecting is normal life: nothing here notices it; the client numbers and buffers frames
 * while disconnected and replays them after the hub's resume.
 */
public final class HubLink extends AbstractBehavior<HubLink.Command> {

  public sealed interface Command {}

  /** A task's protocol session attaches to receive its inbound frames (cancels). */
  public record Attach(String taskId, ActorRef<ProtocolSession.Command> session)
      implements Command {}

  /** Send one progress event of a task. */
  public record SendProgress(RunEvent event) implements Command {}

  /** Send a task's report (its last frame). */
  public record SendReport(RunOutcome outcome) implements Command {}

  /** A frame from the hub, applied by the client (once, in seq order). */
  private record Inbound(SequencedFrame frame) implements Command {}

  private record SendFailed(String taskId, String kind, Throwable cause) implements Command {}

  /**
   * What a runner's operator hears of its tasks, one notice per step in the order they happen
   * ({@code capsule runner} prints them).
   */
  public record TaskNotice(String taskId, Step step, String detail) {
    public enum Step {
      /** A run started for the task. */
      STARTED,
      /** All {@code maxRuns} slots are busy: the task waits its turn. */
      WAITING,
      /** The hub canceled the task. */
      CANCELED,
      /** The task names no capsule of this runner: reported blocked at once. */
      BLOCKED,
      /** The task's report went to the hub. */
      FINISHED
    }

    /** One line for a person: {@code task t-1: started (capsule hello)}. */
    public String describe() {
      return "task "
          + taskId
          + ": "
          + step.name().toLowerCase(java.util.Locale.ROOT)
          + (detail.isEmpty() ? "" : " (" + detail + ")");
    }
  }

  private final RunnerClient client;
  private final ActorRef<CapsuleRuntime.Command> runtime;
  private final AssignReader reader;
  private final int maxRuns;
  private final Map<String, ActorRef<ProtocolSession.Command>> sessions = new HashMap<>();
  private final Set<String> running = new HashSet<>();
  private final ArrayDeque<RunRequest> waiting = new ArrayDeque<>();
  private final Consumer<TaskNotice> notices;

  /**
   * @param maxRuns runs at once (at least 1); assignments beyond wait for a run to end
   */
  public static Behavior<Command> create(
      RunnerClient client,
      ActorRef<CapsuleRuntime.Command> runtime,
      AssignReader reader,
      int maxRuns) {
    return create(client, runtime, reader, maxRuns, n -> {});
  }

  /**
   * @param maxRuns runs at once (at least 1); assignments beyond wait for a run to end
   * @param notices hears each task's steps; called on this actor's thread, so it must not block
   */
  public static Behavior<Command> create(
      RunnerClient client,
      ActorRef<CapsuleRuntime.Command> runtime,
      AssignReader reader,
      int maxRuns,
      Consumer<TaskNotice> notices) {
    if (maxRuns < 1) {
      throw new IllegalArgumentException("maxRuns must be at least 1");
    }
    return Behaviors.setup(ctx -> new HubLink(ctx, client, runtime, reader, maxRuns, notices));
  }

  private HubLink(
      ActorContext<Command> ctx,
      RunnerClient client,
      ActorRef<CapsuleRuntime.Command> runtime,
      AssignReader reader,
      int maxRuns,
      Consumer<TaskNotice> notices) {
    super(ctx);
    this.client = client;
    this.runtime = runtime;
    this.reader = reader;
    this.maxRuns = maxRuns;
    this.notices = notices;
    // Hub-to-runner frames are commands (assign, cancel): few, and each is worth its mailbox slot.
    RuntimeMetrics.get(ctx.getSystem()).watch(client.traffic()); // frames, replays, reconnects
    ActorRef<Command> self = ctx.getSelf();
    client.inbound().runWith(Sink.foreach(f -> self.tell(new Inbound(f))), ctx.getSystem());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Inbound.class, this::onInbound)
        .onMessage(Attach.class, this::onAttach)
        .onMessage(SendProgress.class, this::onProgress)
        .onMessage(SendReport.class, this::onReport)
        .onMessage(SendFailed.class, this::onSendFailed)
        .build();
  }

  /**
   * One frame from the hub. Whatever goes wrong handling it is that task's failure, reported as
   * such ({@code E-RUN-042}); it never stops this actor, which would leave the runner connected but
   * deaf to every later task.
   */
  private Behavior<Command> onInbound(Inbound in) {
    try {
      if (in.frame() instanceof TaskAssign assign) {
        onAssign(assign);
      } else if (in.frame() instanceof TaskCancel cancel) {
        onCancel(cancel);
      }
    } catch (RuntimeException e) {
      String taskId = taskIdOf(in.frame());
      getContext().getLog().error("task {}: the runner failed handling a frame", taskId, e);
      running.remove(taskId);
      waiting.removeIf(r -> r.taskId().equals(taskId));
      refuse(
          taskId,
          "failed",
          Diagnostic.of(Code.E_RUN_042, "the runner failed handling the task: " + e));
    }
    return this;
  }

  private void onAssign(TaskAssign assign) {
    AssignReader.Reading reading = reader.read(assign);
    if (reading instanceof AssignReader.Refused refused) {
      refuse(assign.task().id(), "blocked", refused.diagnostic());
      return;
    }
    RunRequest request = ((AssignReader.Accepted) reading).request();
    if (running.size() < maxRuns) {
      start(request);
    } else {
      waiting.add(request);
      announce(request.taskId(), TaskNotice.Step.WAITING, maxRuns + " runs busy");
    }
  }

  private void onCancel(TaskCancel cancel) {
    announce(cancel.taskId(), TaskNotice.Step.CANCELED, cancel.reason());
    boolean queued = waiting.removeIf(r -> r.taskId().equals(cancel.taskId()));
    ActorRef<ProtocolSession.Command> s = sessions.get(cancel.taskId());
    if (queued) {
      canceledBeforeStart(cancel);
    } else if (s != null) {
      s.tell(new ProtocolSession.HubCancel(cancel.reason()));
    } else {
      runtime.tell(new CapsuleRuntime.CancelRun(cancel.taskId(), cancel.reason()));
    }
  }

  private static String taskIdOf(SequencedFrame frame) {
    if (frame instanceof TaskAssign a) {
      return a.task().id();
    }
    return frame instanceof TaskCancel c ? c.taskId() : "";
  }

  private void start(RunRequest request) {
    running.add(request.taskId());
    announce(request.taskId(), TaskNotice.Step.STARTED, "capsule " + name(request.capsule()));
    runtime.tell(
        new CapsuleRuntime.StartRun(
            request, Optional.empty(), Optional.of(getContext().getSelf()), Optional.empty()));
  }

  /**
   * A task this runner will not run, or could not handle: reported at once with its code, no run
   * (docs/runner-protocol.md).
   */
  private void refuse(String taskId, String status, Diagnostic d) {
    getContext().getLog().warn("{}: {}", taskId, d.message());
    announce(
        taskId,
        status.equals("blocked") ? TaskNotice.Step.BLOCKED : TaskNotice.Step.FINISHED,
        d.code().id() + ": " + d.message());
    send(
        taskId,
        "report",
        ProgressFit.report( // the message may quote the hub's values, which may be long
            TaskReportBody.builder(taskId, status, UsageSplit.ZERO)
                .failureType(d.code().id())
                .summaryBusiness(d.message())
                .build(),
            client.frameCapBytes()));
  }

  /** A cancel for a task still waiting for a slot: it never starts (docs/run-semantics.md §4). */
  private void canceledBeforeStart(TaskCancel cancel) {
    announce(cancel.taskId(), TaskNotice.Step.FINISHED, "failed: canceled before it started");
    send(
        cancel.taskId(),
        "report",
        new TaskReport(
            TaskReportBody.builder(cancel.taskId(), "failed", UsageSplit.ZERO)
                .failureType("canceled")
                .build()));
  }

  private Behavior<Command> onAttach(Attach a) {
    sessions.put(a.taskId(), a.session());
    return this;
  }

  private Behavior<Command> onProgress(SendProgress p) {
    if (p.event() instanceof RunEvent.Finished) {
      return this; // the report carries it
    }
    ObjectNode payload = RunEventJson.toJson(p.event());
    String task = p.event().taskId();
    for (TaskProgress frame :
        ProgressFit.progress(task, p.event().kind(), payload, client.frameCapBytes())) {
      send(task, p.event().kind(), frame);
    }
    return this;
  }

  private Behavior<Command> onReport(SendReport r) {
    RunOutcome o = r.outcome();
    TaskReportBody.Builder b =
        TaskReportBody.builder(o.taskId(), o.status().wire(), o.usage()).iterations(o.turns());
    o.result().ifPresent(b::summaryBusiness);
    o.failureType().ifPresent(b::failureType);
    send(o.taskId(), "report", ProgressFit.report(b.build(), client.frameCapBytes()));
    announce(o.taskId(), TaskNotice.Step.FINISHED, summary(o));
    sessions.remove(o.taskId());
    if (running.remove(o.taskId()) && !waiting.isEmpty()) {
      start(waiting.poll());
    }
    return this;
  }

  private void announce(String taskId, TaskNotice.Step step, String detail) {
    try {
      notices.accept(new TaskNotice(taskId, step, detail));
    } catch (RuntimeException e) {
      getContext().getLog().warn("a task notice listener failed: {}", e.toString());
    }
  }

  /** The capsule as the hub named it: its folder's name, or its registered name. */
  private static String name(CapsuleRef ref) {
    if (ref instanceof CapsuleRef.Folder f) {
      java.nio.file.Path file = java.nio.file.Path.of(f.path()).getFileName();
      return file == null ? f.path() : file.toString();
    }
    return ref instanceof CapsuleRef.Registered r ? r.name() : ref.key();
  }

  private static String summary(RunOutcome o) {
    return o.status().wire()
        + o.failureType().map(t -> " " + t).orElse("")
        + ", "
        + o.turns()
        + (o.turns() == 1 ? " turn, " : " turns, ")
        + String.format(java.util.Locale.ROOT, "%.1f s", o.duration().toMillis() / 1000.0);
  }

  private void send(String taskId, String kind, SequencedFrame frame) {
    ActorRef<Command> self = getContext().getSelf();
    client
        .send(frame)
        .whenComplete(
            (sent, failure) -> {
              if (failure != null) {
                self.tell(new SendFailed(taskId, kind, failure));
              }
            });
  }

  /** The client's replay buffer is full (E-PRO-006): surfaced, never silent. */
  private Behavior<Command> onSendFailed(SendFailed f) {
    getContext()
        .getLog()
        .error(
            "task {}: a {} frame could not be sent: {}",
            f.taskId(),
            f.kind(),
            f.cause().toString());
    return this;
  }
}
