package io.capsule.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;

/**
 * Drives whole capsule runs in an ActorTestKit scenario: an embedded runtime in the kit's system,
 * in-memory capsules with Java drivers (e.g. {@link ScriptedDriver}), and each run's events on a
 * {@link TestProbe}. With {@link #manualTimeConfig()} every run timer (inactivity, terminal grace,
 * interrupt grace, driver call deadline) fires only when the test moves {@link #time()}.
 *
 * <p>The harness is a real process, so a test first waits, in real time, for the event that shows
 * the run reached the state whose timer it wants to fire ({@link Run#awaitEvent}), then moves
 * manual time past it.
 *
 * <pre>{@code
 * ActorTestKit kit = ActorTestKit.create(CapsuleRunKit.manualTimeConfig());
 * CapsuleRunKit runs = CapsuleRunKit.create(kit, workRoot);
 * CapsuleRef ref = runs.register("silent", manifest, driver::fresh);
 * CapsuleRunKit.Run run = runs.start(ref, "wait");
 * run.awaitEvent(e -> e instanceof RunEvent.TextCompleted);
 * runs.time().timePasses(runs.limits().inactivityTimeout().plusSeconds(1));
 * RunOutcome o = run.awaitOutcome();   // E-RUN-035
 * }</pre>
 */
public final class CapsuleRunKit {
  /** How long a test waits, in real time, for a real harness to get somewhere. */
  public static final Duration REAL_WAIT = Duration.ofSeconds(30);

  private final ActorTestKit kit;
  private final RunLimits limits;
  private final EmbeddedRuntime runtime;
  private int runs;

  private CapsuleRunKit(ActorTestKit kit, RunLimits limits) {
    this.kit = kit;
    this.limits = limits;
    this.runtime = EmbeddedRuntime.create(kit.system(), limits, EmbeddedRuntime.noFolderDrivers());
  }

  /** The test kit configuration with Pekko's manual scheduler. */
  public static Config manualTimeConfig() {
    return ManualTime.config().withFallback(ConfigFactory.load());
  }

  /** A runtime in {@code kit}'s system with the spec's default timers, runs under workRoot. */
  public static CapsuleRunKit create(ActorTestKit kit, Path workRoot) {
    return create(kit, RunLimits.defaults(workRoot));
  }

  public static CapsuleRunKit create(ActorTestKit kit, RunLimits limits) {
    return new CapsuleRunKit(kit, limits);
  }

  public RunLimits limits() {
    return limits;
  }

  public EmbeddedRuntime runtime() {
    return runtime;
  }

  /** The manual clock; only usable when the kit was created with {@link #manualTimeConfig()}. */
  public ManualTime time() {
    return ManualTime.get(kit.system());
  }

  /** Registers an in-memory capsule; {@code drivers} makes one fresh driver per run. */
  public CapsuleRef register(String name, Manifest manifest, Supplier<ProcessDriver> drivers) {
    return runtime.register(name, manifest, drivers).toCompletableFuture().join();
  }

  /** Starts a run of {@code capsule} with {@code task}; its events go to the returned probe. */
  public Run start(CapsuleRef capsule, String task) {
    return start(RunRequest.of("kit-task-" + (++runs), capsule, task));
  }

  public Run start(RunRequest request) {
    TestProbe<RunEvent> probe = kit.createTestProbe();
    RunHandle handle = runtime.start(request, probe.ref());
    return new Run(probe, handle);
  }

  /** One run: its handle and the probe that hears its events, in order. */
  public static final class Run {
    private final TestProbe<RunEvent> probe;
    private final RunHandle handle;
    private final List<RunEvent> seen = new ArrayList<>();

    private Run(TestProbe<RunEvent> probe, RunHandle handle) {
      this.probe = probe;
      this.handle = handle;
    }

    public RunHandle handle() {
      return handle;
    }

    public TestProbe<RunEvent> probe() {
      return probe;
    }

    /** Every event received so far through this helper. */
    public List<RunEvent> seen() {
      return List.copyOf(seen);
    }

    /** Receives events until one matches (real time, {@link #REAL_WAIT}); returns it. */
    public RunEvent awaitEvent(Predicate<RunEvent> match) {
      while (true) {
        RunEvent e = probe.receiveMessage(REAL_WAIT);
        seen.add(e);
        if (match.test(e)) {
          return e;
        }
      }
    }

    /** Receives events until the outcome, which is always the last one. */
    public RunOutcome awaitOutcome() {
      return ((RunEvent.Finished) awaitEvent(e -> e instanceof RunEvent.Finished)).outcome();
    }

    /** Asserts that no event arrives within {@code window} of real time. */
    public void expectNoEvent(Duration window) {
      probe.expectNoMessage(window);
    }
  }
}
