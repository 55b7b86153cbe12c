package io.capsule.bench.runtime;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * One ActorSystem with one embedded runtime whose runs live under a temporary work root, as an
 * application embeds it. Not thread-safe; a benchmark's setup makes it and its teardown closes it.
 */
final class BenchRuntime implements AutoCloseable {

  /** How long the register ask and the system's shutdown may take on a loaded machine. */
  private static final Duration SLOW = Duration.ofSeconds(60);

  final ActorSystem<Void> system;
  final EmbeddedRuntime runtime;
  private final Path workRoot;

  private BenchRuntime(ActorSystem<Void> system, EmbeddedRuntime runtime, Path workRoot) {
    this.system = system;
    this.runtime = runtime;
    this.workRoot = workRoot;
  }

  static BenchRuntime start(String name) {
    try {
      Path root = Files.createTempDirectory("capsule-bench-" + name + "-");
      ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), name);
      EmbeddedRuntime rt =
          EmbeddedRuntime.create(
              system, RunLimits.defaults(root), EmbeddedRuntime.noFolderDrivers());
      return new BenchRuntime(system, rt, root);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** An in-memory capsule named {@code name} running {@code drivers}' driver. */
  CapsuleRef register(String name, Supplier<ProcessDriver> drivers) {
    Manifest manifest =
        Manifest.builder(name, "0.1.0").builtinDriver(name, "0.1.0").envAllow("PATH").build();
    return runtime
        .register(name, manifest, drivers)
        .toCompletableFuture()
        .orTimeout(SLOW.toSeconds(), TimeUnit.SECONDS)
        .join();
  }

  @Override
  public void close() {
    system.terminate();
    system
        .getWhenTerminated()
        .toCompletableFuture()
        .orTimeout(SLOW.toSeconds(), TimeUnit.SECONDS)
        .join();
    try (Stream<Path> all = Files.walk(workRoot)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
