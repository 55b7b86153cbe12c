package io.capsule.cli;

import io.capsule.config.settings.CapsuleSettings;
import io.capsule.driver.load.DriverLoader;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * An {@link EmbeddedRuntime} wired exactly as {@code capsule run} wires it (same settings mapping,
 * same driver loader), for the real-harness tests that drive a run through its {@code RunHandle}.
 * Lives in the cli package only to reuse that wiring instead of copying it.
 */
public final class EmbeddedClaude implements AutoCloseable {
  private final ActorSystem<Void> system;
  private final DriverLoader loader;
  private final EmbeddedRuntime runtime;

  private EmbeddedClaude(ActorSystem<Void> system, DriverLoader loader, EmbeddedRuntime runtime) {
    this.system = system;
    this.loader = loader;
    this.runtime = runtime;
  }

  /** A runtime whose run directories go under {@code workRoot}. */
  public static EmbeddedClaude start(Path workRoot) {
    CapsuleSettings settings =
        CapsuleSettings.load()
            .withOverrides(Map.of("capsule.run.work-root", workRoot.toAbsolutePath().toString()));
    ActorSystem<Void> system = CliSystem.create("real-harness", settings);
    DriverLoader loader = RuntimeWiring.driverLoader(settings);
    EmbeddedRuntime runtime =
        EmbeddedRuntime.create(system, RuntimeWiring.limits(settings), RuntimeWiring.wasm(loader));
    return new EmbeddedClaude(system, loader, runtime);
  }

  public ActorSystem<Void> system() {
    return system;
  }

  public EmbeddedRuntime runtime() {
    return runtime;
  }

  /** Closes the driver loader and terminates the system, waiting up to 30 s for it. */
  @Override
  public void close() {
    try {
      loader.close();
    } finally {
      system.terminate();
      try {
        system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        throw new IllegalStateException("the actor system did not terminate", e);
      }
    }
  }
}
