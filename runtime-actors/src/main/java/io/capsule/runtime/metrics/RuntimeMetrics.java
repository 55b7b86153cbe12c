package io.capsule.runtime.metrics;

import io.capsule.runtime.javadsl.RunEvent;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * Where a node's runs report their meters: an actor-system extension (node-local, as ARCHITECTURE
 * asks of services a run looks up), bound once to the {@link MeterRegistry} the embedder or {@code
 * capsule runner --metrics} passes in. Until then, and in a system nobody binds, runs record
 * nothing and cost nothing.
 *
 * <p>Threading: {@link #bind} and {@link #on} are safe from any thread.
 */
public final class RuntimeMetrics implements Extension {
  private static final Id ID = new Id();

  private final AtomicReference<RunMeters> meters = new AtomicReference<>();

  private RuntimeMetrics() {}

  public static RuntimeMetrics get(ActorSystem<?> system) {
    return ID.apply(system);
  }

  /**
   * Records this node's runs on {@code registry} from now on.
   *
   * @throws IllegalStateException when already bound: two registries would each see half the runs
   */
  public RunMeters bind(MeterRegistry registry) {
    RunMeters m = new RunMeters(registry);
    if (!meters.compareAndSet(null, m)) {
      throw new IllegalStateException("the runtime's meters are already bound to a registry");
    }
    return m;
  }

  public Optional<RunMeters> meters() {
    return Optional.ofNullable(meters.get());
  }

  /** One run event, as the run's session hands it on; nothing when no registry is bound. */
  public void on(RunEvent event) {
    RunMeters m = meters.get();
    if (m != null) {
      m.on(event);
    }
  }

  private static final class Id extends ExtensionId<RuntimeMetrics> {
    @Override
    public RuntimeMetrics createExtension(ActorSystem<?> system) {
      return new RuntimeMetrics();
    }
  }
}
