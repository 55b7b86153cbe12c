package io.capsule.runtime.metrics;

import io.capsule.protocol.ws.RunnerTraffic;
import io.capsule.runtime.javadsl.RunEvent;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * Where a node's runs report their meters: an actor-system extension (node-local, as ARCHITECTURE
 * asks of services a run looks up), bound once to the {@link MeterRegistry} the embedder or {@code
 * capsule runner --metrics} passes in. Until then, and in a system nobody binds, runs record
 * nothing and cost nothing.
 *
 * <p>The hooks besides {@link #on} ({@link #driverCall}, {@link #timeSpawn}, {@link
 * #egressRefused}, {@link #watch}) are one-line calls from the parts that see those steps, which
 * run events do not carry.
 *
 * <p>Threading: every method is safe from any thread.
 */
public final class RuntimeMetrics implements Extension {
  private static final Id ID = new Id();

  private final AtomicReference<RunMeters> meters = new AtomicReference<>();

  /** Hub connections watched before (or after) the bind; each is counted once bound. */
  private final List<RunnerTraffic> links = new CopyOnWriteArrayList<>();

  private RuntimeMetrics() {}

  public static RuntimeMetrics get(ActorSystem<?> system) {
    return ID.apply(system);
  }

  /**
   * Records this node's runs on {@code registry} from now on.
   *
   * @throws IllegalStateException when already bound: two registries would each see half the runs
   */
  public synchronized RunMeters bind(MeterRegistry registry) {
    if (meters.get() != null) {
      throw new IllegalStateException("the runtime's meters are already bound to a registry");
    }
    RunMeters m = new RunMeters(registry);
    links.forEach(m::watch);
    meters.set(m);
    return m;
  }

  /** Counts a hub connection's frames and reconnects (now, or from the bind on). */
  public synchronized void watch(RunnerTraffic traffic) {
    links.add(traffic);
    meters().ifPresent(m -> m.watch(traffic));
  }

  /** One driver call took {@code nanos}; {@code driver} is the instance, for its engine. */
  public void driverCall(String function, Object driver, long nanos) {
    RunMeters m = meters.get();
    if (m != null) {
      m.driverCall(function, DriverEngines.of(driver), nanos);
    }
  }

  /** Runs a harness spawn, timing it whether it starts the process or throws. */
  public <T> T timeSpawn(Supplier<T> spawn) {
    long t0 = System.nanoTime();
    boolean ok = false;
    try {
      T started = spawn.get();
      ok = true;
      return started;
    } finally {
      RunMeters m = meters.get();
      if (m != null) {
        m.harnessSpawn(ok, System.nanoTime() - t0);
      }
    }
  }

  /** The egress proxy refused one connection. */
  public void egressRefused() {
    meters().ifPresent(RunMeters::egressRefused);
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
