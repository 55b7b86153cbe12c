package io.capsule.runtime.run;

import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.CapsuleSerializable;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.hub.HubLink;
import io.capsule.runtime.javadsl.RunEvent;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The serializable start of one {@link CapsuleRun}: the request, who hears its events (a local
 * listener and/or a hub link), and the runtime to tell when it ends. {@code listenerBatches}: see
 * {@link CapsuleRuntime.StartRun}.
 */
public record RunStart(
    RunRequest request,
    Optional<ActorRef<RunEvent>> listener,
    Optional<ActorRef<List<RunEvent>>> listenerBatches,
    Optional<ActorRef<HubLink.Command>> hub,
    ActorRef<CapsuleRuntime.Command> runtime)
    implements CapsuleSerializable {

  public RunStart {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(listenerBatches, "listenerBatches");
    Objects.requireNonNull(hub, "hub");
    Objects.requireNonNull(runtime, "runtime");
    sameListener(listener, listenerBatches);
  }

  /** A start whose listener (if any) gets one message per event. */
  public RunStart(
      RunRequest request,
      Optional<ActorRef<RunEvent>> listener,
      Optional<ActorRef<HubLink.Command>> hub,
      ActorRef<CapsuleRuntime.Command> runtime) {
    this(request, listener, Optional.empty(), hub, runtime);
  }

  /**
   * Refuses a batch listener that is not the listener itself: a batch's events and the single
   * events around it keep their order only on one actor's mailbox.
   */
  public static void sameListener(
      Optional<ActorRef<RunEvent>> listener, Optional<ActorRef<List<RunEvent>>> listenerBatches) {
    if (listenerBatches.isPresent()
        && !listener.map(l -> l.path().equals(listenerBatches.get().path())).orElse(false)) {
      throw new IllegalArgumentException("listenerBatches must be the listener itself");
    }
  }
}
