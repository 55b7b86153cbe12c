package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.Conversation;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestBuilder;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;

/** Builds capsules around {@code play.sh} scenarios and runs them in one test kit. */
final class RunFixture {

  private static final AtomicInteger IDS = new AtomicInteger();

  final ActorTestKit kit;
  final Path workRoot;
  final EmbeddedRuntime runtime;

  RunFixture(ActorTestKit kit, RunLimits limits) {
    this(
        kit,
        limits,
        EmbeddedRuntime.create(kit.system(), limits, EmbeddedRuntime.noFolderDrivers()));
  }

  RunFixture(ActorTestKit kit, RunLimits limits, EmbeddedRuntime runtime) {
    this.kit = kit;
    this.workRoot = limits.workRoot();
    this.runtime = runtime;
  }

  static RunLimits limits(Path workRoot) {
    return RunLimits.defaults(workRoot);
  }

  static Path script() {
    try {
      return Path.of(RunFixture.class.getResource("/run/play.sh").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Writes a scenario (one line per element) and registers a capsule that plays it. */
  CapsuleRef scenario(
      List<String> lines,
      InterruptMethod interrupt,
      boolean keepStdinOpen,
      UnaryOperator<ManifestBuilder> manifest) {
    return scenario(lines, interrupt, keepStdinOpen, manifest, d -> d);
  }

  /** As above, with the driver wrapped (e.g. one that blocks in parse). */
  CapsuleRef scenario(
      List<String> lines,
      InterruptMethod interrupt,
      boolean keepStdinOpen,
      UnaryOperator<ManifestBuilder> manifest,
      java.util.function.Function<PlayDriver, io.capsule.driver.api.ProcessDriver> wrap) {
    try {
      Path file = Files.createTempFile(workRoot, "scenario-", ".txt");
      // Every scenario reads its task first, as a real harness does.
      List<String> all = new ArrayList<>();
      all.add("!read-task");
      all.addAll(lines);
      Files.write(file, all);
      String name = "play-" + IDS.incrementAndGet();
      Manifest m =
          manifest
              .apply(
                  Manifest.builder(name, "0.1.0")
                      .builtinDriver("claude-code", "0.6.0")
                      .systemPrompt("You are a test."))
              .build();
      return runtime
          .register(
              name, m, () -> wrap.apply(new PlayDriver(script(), file, interrupt, keepStdinOpen)))
          .toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  CapsuleRef scenario(String... lines) {
    return scenario(List.of(lines), InterruptMethod.SIGNAL_INT, false, b -> b);
  }

  static UnaryOperator<ManifestBuilder> threaded() {
    return b -> b.conversation(Conversation.THREADED);
  }

  static String taskId() {
    return "task-" + IDS.incrementAndGet();
  }

  /** Every event of one run, up to and including Finished; the probe is then empty. */
  static List<RunEvent> events(TestProbe<RunEvent> probe, Duration max) {
    List<RunEvent> all = new ArrayList<>();
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      Duration left = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
      RunEvent e = probe.receiveMessage(left);
      all.add(e);
      if (e instanceof RunEvent.Finished) {
        probe.expectNoMessage(Duration.ofMillis(100));
        return all;
      }
    }
  }

  static RunOutcome outcome(List<RunEvent> events) {
    RunEvent last = events.get(events.size() - 1);
    assertTrue(last instanceof RunEvent.Finished, "the last event is the outcome");
    assertEquals(
        1, events.stream().filter(e -> e instanceof RunEvent.Finished).count(), "one report");
    return ((RunEvent.Finished) last).outcome();
  }

  static <T extends RunEvent> List<T> only(List<RunEvent> events, Class<T> type) {
    return events.stream().filter(type::isInstance).map(type::cast).toList();
  }

  RunRequest request(CapsuleRef ref, String task) {
    return RunRequest.of(taskId(), ref, task);
  }

  /** No directory named files-* is left anywhere under the work root. */
  void assertNoFilesDirLeft() {
    try (Stream<Path> all = Files.walk(workRoot)) {
      List<Path> left = all.filter(p -> p.getFileName().toString().startsWith("files-")).toList();
      assertEquals(List.of(), left, "files directories left behind");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void assertDead(Path pidFile) throws IOException {
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    assertTrue(
        ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true),
        "the harness process " + pid + " is gone");
  }
}
