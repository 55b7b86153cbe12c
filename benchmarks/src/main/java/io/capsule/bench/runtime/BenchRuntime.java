package io.capsule.bench.runtime;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;

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
    return start(name, limits -> limits);
  }

  /** As {@link #start(String)}, with the default limits changed by {@code tune}. */
  static BenchRuntime start(String name, UnaryOperator<RunLimits> tune) {
    try {
      Path root = Files.createTempDirectory("capsule-bench-" + name + "-");
      ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), name);
      EmbeddedRuntime rt =
          EmbeddedRuntime.create(
              system, tune.apply(RunLimits.defaults(root)), EmbeddedRuntime.noFolderDrivers());
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

  /**
   * The end-to-end baseline: {@code cat file} read line by line, as the runtime's reader must;
   * throws unless cat exits 0 after exactly {@code lines} lines.
   */
  static long catLines(Path file, int lines) throws IOException, InterruptedException {
    Process cat =
        new ProcessBuilder("cat", file.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    long count = 0;
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(cat.getInputStream(), StandardCharsets.UTF_8))) {
      while (r.readLine() != null) {
        count++;
      }
    }
    int exit = cat.waitFor();
    if (exit != 0 || count != lines) {
      throw new IllegalStateException("cat exited " + exit + " after " + count + " lines");
    }
    return count;
  }

  /**
   * Runs {@code capsule} on {@code file} to its outcome and counts the completed texts it streamed;
   * throws unless the run is {@code done} with exactly {@code expected} of them.
   */
  long runCountingTexts(String taskId, CapsuleRef capsule, Path file, long expected) {
    Pair<RunHandle, CompletionStage<Long>> run =
        runtime
            .source(RunRequest.of(taskId, capsule, file.toString()))
            .toMat(
                Sink.fold(0L, (n, e) -> e instanceof RunEvent.TextCompleted ? n + 1 : n),
                Keep.both())
            .run(system);
    RunOutcome outcome = run.first().outcome().toCompletableFuture().join();
    long count = run.second().toCompletableFuture().join();
    if (outcome.status() != RunStatus.DONE || count != expected) {
      throw new IllegalStateException(
          "run ended "
              + outcome.status()
              + " ("
              + outcome.message()
              + ") with "
              + count
              + " of "
              + expected
              + " texts");
    }
    return count;
  }
}
