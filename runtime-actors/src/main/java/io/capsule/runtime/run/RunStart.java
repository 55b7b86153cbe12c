package io.capsule.runtime.run;

import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.CapsuleSerializable;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.hub.HubLink;
import io.capsule.runtime.javadsl.RunEvent;
import java.util.Objects;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The serializable start of one {@link CapsuleRun}: the request, who hears its events (a local
 * listener and/or a hub link), and the runtime to tell when it ends.
 */
public record RunStart(
    RunRequest request,
    Optional<ActorRef<RunEvent>> listener,
    Optional<ActorRef<HubLink.Command>> hub,
    ActorRef<CapsuleRuntime.Command> runtime)
    implements CapsuleSerializable {

  public RunStart {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(hub, "hub");
    Objects.requireNonNull(runtime, "runtime");
  }
}
