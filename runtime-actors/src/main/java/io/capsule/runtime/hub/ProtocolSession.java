package io.capsule.runtime.hub;

import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.metrics.RuntimeMetrics;
import io.capsule.runtime.run.CapsuleRun;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * One task's side of the conversation with whoever asked for it: a local listener (embedded mode,
 * {@code capsule run}) and/or the hub through a {@link HubLink}. It numbers the task's events
 * (progress seq 1, 2, 3, … in run order), sends each to the listener and, when a hub is attached,
 * as a {@code task.progress} / {@code task.report} frame; the hub link's sequencing machine keeps
 * the replay buffer, so a restart of this actor loses nothing.
 *
 * <p>Exactly one report: the first {@link Finish} sends {@link RunEvent.Finished}; later ones are
 * ignored. A cancel from the hub arrives here and goes to the run.
 */
public final class ProtocolSession extends AbstractBehavior<ProtocolSession.Command> {

  public sealed interface Command {}

  /** One progress event of the run, in order. */
  public record Progress(RunEvent event) implements Command {
    public Progress {
      Objects.requireNonNull(event, "event");
    }
  }

  /**
   * The progress events of one parsed batch, in order: handed on as if each came as its own {@link
   * Progress}, for one message instead of one per event.
   */
  public record ProgressAll(List<RunEvent> events) implements Command {
    public ProgressAll {
      events = List.copyOf(events);
    }
  }

  /** The run's outcome; answered with {@link Reported} once it has been handed on. */
  public record Finish(RunOutcome outcome, ActorRef<Reported> replyTo) implements Command {}

  /** The hub canceled the task ({@code task.cancel}). */
  public record HubCancel(String reason) implements Command {}

  /** The report has been handed to the listener and the hub link. */
  public record Reported(String taskId) {}

  private final String taskId;
  private final Optional<ActorRef<RunEvent>> listener;
  private final ActorRef<List<RunEvent>> listenerBatches; // null: one message per event
  private final Optional<ActorRef<HubLink.Command>> hub;
  private final ActorRef<CapsuleRun.Command> run;
  private final RuntimeMetrics metrics; // looked up once, not per event (issue #15)
  private long seq;
  private boolean reported;

  public static Behavior<Command> create(
      String taskId,
      Optional<ActorRef<RunEvent>> listener,
      Optional<ActorRef<HubLink.Command>> hub,
      ActorRef<CapsuleRun.Command> run) {
    return create(taskId, listener, Optional.empty(), hub, run);
  }

  /**
   * As above; {@code listenerBatches}, the listener itself, gets a {@link ProgressAll}'s events as
   * one message (see {@link io.capsule.runtime.CapsuleRuntime.StartRun}).
   */
  public static Behavior<Command> create(
      String taskId,
      Optional<ActorRef<RunEvent>> listener,
      Optional<ActorRef<List<RunEvent>>> listenerBatches,
      Optional<ActorRef<HubLink.Command>> hub,
      ActorRef<CapsuleRun.Command> run) {
    return Behaviors.setup(
        ctx -> new ProtocolSession(ctx, taskId, listener, listenerBatches, hub, run));
  }

  private ProtocolSession(
      ActorContext<Command> ctx,
      String taskId,
      Optional<ActorRef<RunEvent>> listener,
      Optional<ActorRef<List<RunEvent>>> listenerBatches,
      Optional<ActorRef<HubLink.Command>> hub,
      ActorRef<CapsuleRun.Command> run) {
    super(ctx);
    this.taskId = taskId;
    this.listener = listener;
    this.listenerBatches = listenerBatches.orElse(null);
    this.hub = hub;
    this.run = run;
    this.metrics = RuntimeMetrics.get(ctx.getSystem());
    hub.ifPresent(h -> h.tell(new HubLink.Attach(taskId, ctx.getSelf())));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Progress.class, p -> onProgress(p.event()))
        .onMessage(ProgressAll.class, this::onProgressAll)
        .onMessage(Finish.class, this::onFinish)
        .onMessage(HubCancel.class, this::onHubCancel)
        .build();
  }

  private Behavior<Command> onProgress(RunEvent event) {
    if (reported) {
      return this;
    }
    seq++;
    metrics.on(event); // meters derive from events
    listener.ifPresent(l -> l.tell(event));
    hub.ifPresent(h -> h.tell(new HubLink.SendProgress(event)));
    return this;
  }

  private Behavior<Command> onProgressAll(ProgressAll all) {
    if (listenerBatches == null) {
      for (RunEvent e : all.events()) {
        onProgress(e);
      }
      return this;
    }
    if (reported) {
      return this;
    }
    ActorRef<HubLink.Command> h = hub.orElse(null);
    for (RunEvent e : all.events()) {
      seq++;
      metrics.on(e); // meters derive from events
      if (h != null) {
        h.tell(new HubLink.SendProgress(e));
      }
    }
    listenerBatches.tell(all.events()); // immutable (ProgressAll copies), so shared as it is
    return this;
  }

  private Behavior<Command> onFinish(Finish f) {
    if (!reported) {
      reported = true;
      seq++;
      RunEvent.Finished finished = new RunEvent.Finished(f.outcome());
      metrics.on(finished);
      listener.ifPresent(l -> l.tell(finished));
      hub.ifPresent(h -> h.tell(new HubLink.SendReport(f.outcome())));
    }
    f.replyTo().tell(new Reported(taskId));
    return this;
  }

  private Behavior<Command> onHubCancel(HubCancel c) {
    if (!reported) {
      run.tell(new CapsuleRun.Cancel(c.reason()));
    }
    return this;
  }

  /** Events handed on so far for this task, the report included. */
  long handedOn() {
    return seq;
  }
}
