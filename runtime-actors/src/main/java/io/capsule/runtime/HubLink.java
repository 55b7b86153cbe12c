package io.capsule.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * One hub connection seen from the runtime (runner-protocol.md): it owns the connection's {@link
 * SeqState} (per-task seq numbers and the replay buffer, so nothing is lost when a {@link
 * ProtocolSession} restarts or the socket drops), starts a run for each applied {@code
 * task.assign}, routes {@code task.cancel} to the task's session, answers {@code ping}, and applies
 * {@code ack}s. Reconnecting is normal life: while disconnected, frames are numbered and buffered;
 * on {@link Connected} it says {@code hello} with its resume map, and re-sends what the hub lacks
 * once the hub's {@code ack} arrives (or its whole buffer when the hub does not ack).
 *
 * <p>The socket is behind {@link HubTransport}; the protocol client's callbacks only send {@link
 * Connected}, {@link Disconnected} and {@link Inbound} here.
 */
public final class HubLink extends AbstractBehavior<HubLink.Command> {

  /** Sends frames on the current connection. Called on the actor thread; must not block. */
  @FunctionalInterface
  public interface HubTransport {
    void send(Frame frame);
  }

  public sealed interface Command {}

  /** The connection is up: say hello. */
  public record Connected(HubTransport transport) implements Command {}

  /** The connection dropped; frames are buffered until the next {@link Connected}. */
  public record Disconnected() implements Command {}

  /** A decoded frame from the hub. */
  public record Inbound(Frame frame) implements Command {}

  /** A task's protocol session attaches to receive its inbound frames. */
  public record Attach(String taskId, ActorRef<ProtocolSession.Command> session)
      implements Command {}

  /** Send one progress event of a task. */
  public record SendProgress(RunEvent event) implements Command {}

  /** Send a task's report (its last frame). */
  public record SendReport(RunOutcome outcome) implements Command {}

  private static final ObjectMapper JSON = new ObjectMapper().findAndRegisterModules();

  private final SeqState seq;
  private final ActorRef<CapsuleRuntime.Command> runtime;
  private final Function<TaskAssign, RunRequest> toRequest;
  private final String projectId;
  private final String runnerVersion;
  private final Map<String, ActorRef<ProtocolSession.Command>> sessions = new HashMap<>();
  private Optional<HubTransport> transport = Optional.empty();

  /**
   * @param seq the connection's sequencing machine (from the protocol settings)
   * @param runtime where assigned tasks start
   * @param toRequest reads a {@code task.assign} into a run request (capsule from {@code
   *     invocation.backend}, task text, budget, session key)
   */
  public static Behavior<Command> create(
      SeqState seq,
      ActorRef<CapsuleRuntime.Command> runtime,
      Function<TaskAssign, RunRequest> toRequest,
      String projectId,
      String runnerVersion) {
    return Behaviors.setup(
        ctx -> new HubLink(ctx, seq, runtime, toRequest, projectId, runnerVersion));
  }

  private HubLink(
      ActorContext<Command> ctx,
      SeqState seq,
      ActorRef<CapsuleRuntime.Command> runtime,
      Function<TaskAssign, RunRequest> toRequest,
      String projectId,
      String runnerVersion) {
    super(ctx);
    this.seq = Objects.requireNonNull(seq, "seq");
    this.runtime = runtime;
    this.toRequest = toRequest;
    this.projectId = projectId;
    this.runnerVersion = runnerVersion;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Connected.class, this::onConnected)
        .onMessage(Disconnected.class, d -> onDisconnected())
        .onMessage(Inbound.class, this::onInbound)
        .onMessage(Attach.class, this::onAttach)
        .onMessage(SendProgress.class, this::onProgress)
        .onMessage(SendReport.class, this::onReport)
        .build();
  }

  private Behavior<Command> onConnected(Connected c) {
    transport = Optional.of(c.transport());
    c.transport().send(new Hello(projectId, runnerVersion, List.of("ack"), seq.resumeMap()));
    return this;
  }

  private Behavior<Command> onDisconnected() {
    transport = Optional.empty();
    return this;
  }

  private Behavior<Command> onInbound(Inbound in) {
    Frame f = in.frame();
    if (f instanceof Ping ping) {
      send(new Pong(ping.nonce()));
    } else if (f instanceof Ack ack) {
      // The hub holds these: drop them from the buffer, then re-send what it lacks.
      seq.ack(ack.acks());
      seq.replayListFor(ack.acks()).forEach(this::send);
    } else if (f instanceof SequencedFrame sf) {
      Receipt r = seq.receive(sf);
      r.applied().forEach(this::apply);
    }
    return this;
  }

  private void apply(SequencedFrame f) {
    if (f instanceof TaskAssign assign) {
      runtime.tell(
          new CapsuleRuntime.StartRun(
              toRequest.apply(assign),
              Optional.empty(),
              Optional.of(getContext().getSelf()),
              Optional.empty()));
    } else if (f instanceof TaskCancel cancel) {
      ActorRef<ProtocolSession.Command> s = sessions.get(cancel.taskId());
      if (s != null) {
        s.tell(new ProtocolSession.HubCancel(cancel.reason()));
      } else {
        runtime.tell(new CapsuleRuntime.CancelRun(cancel.taskId(), cancel.reason()));
      }
    }
  }

  private Behavior<Command> onAttach(Attach a) {
    sessions.put(a.taskId(), a.session());
    return this;
  }

  private Behavior<Command> onProgress(SendProgress p) {
    if (p.event() instanceof RunEvent.Finished) {
      return this;
    }
    JsonNode payload = JSON.valueToTree(p.event());
    send(seq.emit(new TaskProgress(p.event().taskId(), p.event().kind(), payload)));
    return this;
  }

  private Behavior<Command> onReport(SendReport r) {
    RunOutcome o = r.outcome();
    TaskReportBody.Builder b =
        TaskReportBody.builder(o.taskId(), o.status().wire(), o.usage()).iterations(o.turns());
    o.result().ifPresent(b::summaryBusiness);
    o.failureType().ifPresent(b::failureType);
    send(seq.emit(new TaskReport(b.build())));
    sessions.remove(o.taskId());
    return this;
  }

  private void send(Frame f) {
    transport.ifPresent(t -> t.send(f));
  }
}
