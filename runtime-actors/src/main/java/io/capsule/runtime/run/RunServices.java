package io.capsule.runtime.run;

import io.capsule.runtime.RunLimits;
import io.capsule.runtime.VersionProber;
import io.capsule.runtime.driver.DriverRegistry;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * Node-local services a run looks up through the runtime guardian: the driver registry, the limits,
 * the version prober, the clock (for trace timestamps and durations only: every wait is a timer)
 * and the host environment the capsule's {@code env.allow} draws from.
 */
public record RunServices(
    ActorRef<DriverRegistry.Command> registry,
    RunLimits limits,
    VersionProber prober,
    Clock clock,
    Map<String, String> hostEnv) {

  public RunServices {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(prober, "prober");
    Objects.requireNonNull(clock, "clock");
    hostEnv = Map.copyOf(hostEnv);
  }
}
